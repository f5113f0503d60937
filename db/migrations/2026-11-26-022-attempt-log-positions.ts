// Each endpoint numbers the attempts it logs (webhooks.attempts_logged, webhook_attempts.log_position),
// so keeping only the newest ones deletes the single attempt that fell out by its number instead of
// counting a hundred rows back from the newest on every attempt. Existing logs are numbered 1..n in
// the order they were written.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhooks ADD COLUMN attempts_logged bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE webhook_attempts ADD COLUMN log_position bigint`.execute(db);
  await sql`
    UPDATE webhook_attempts AS a SET log_position = numbered.position
    FROM (SELECT id, row_number() OVER (PARTITION BY webhook_id ORDER BY seq) AS position FROM webhook_attempts)
      AS numbered
    WHERE a.id = numbered.id`.execute(db);
  await sql`
    UPDATE webhooks AS w SET attempts_logged = logged.last
    FROM (SELECT webhook_id, max(log_position) AS last FROM webhook_attempts GROUP BY webhook_id) AS logged
    WHERE w.id = logged.webhook_id`.execute(db);
  await sql`ALTER TABLE webhook_attempts ALTER COLUMN log_position SET NOT NULL`.execute(db);
  await sql`CREATE UNIQUE INDEX webhook_attempts_log_position_idx
            ON webhook_attempts (webhook_id, log_position)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX webhook_attempts_log_position_idx`.execute(db);
  await sql`ALTER TABLE webhook_attempts DROP COLUMN log_position`.execute(db);
  await sql`ALTER TABLE webhooks DROP COLUMN attempts_logged`.execute(db);
}
