// History that stays cheap as it grows, and traces that follow an event. Per-endpoint delivery counts
// kept by triggers (the deliveries list's total), indexes the retention job deletes by, and the W3C
// traceparent of the request that caused an event, for the logs of its deliveries.
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import { projectFile } from '../../src/project-files.js';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('events').addColumn('traceparent', 'text').execute();

  await db.schema
    .createTable('webhook_delivery_counts')
    .addColumn('webhook_id', 'uuid', (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_delivery_counts_pk', ['webhook_id', 'status'])
    .execute();
  await sql`
    INSERT INTO webhook_delivery_counts (webhook_id, status, count)
    SELECT webhook_id, status, count(*) FROM webhook_deliveries GROUP BY webhook_id, status`.execute(db);
  // The trigger function is kept with the others in db/functions; the triggers need it to exist now.
  await sql.raw(readFileSync(projectFile('db/functions/count_webhook_deliveries.sql'), 'utf8')).execute(db);
  await sql`CREATE TRIGGER webhook_deliveries_counted_insert AFTER INSERT ON webhook_deliveries
            REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_deliveries()`.execute(
    db,
  );
  await sql`CREATE TRIGGER webhook_deliveries_counted_update AFTER UPDATE ON webhook_deliveries
            REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
            FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_deliveries()`.execute(db);
  await sql`CREATE TRIGGER webhook_deliveries_counted_delete AFTER DELETE ON webhook_deliveries
            REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_webhook_deliveries()`.execute(
    db,
  );

  // What the retention job deletes by.
  await sql`CREATE INDEX webhook_deliveries_final_created_idx ON webhook_deliveries (created_at)
            WHERE status <> 'pending'`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`.execute(db);
  await sql`CREATE INDEX events_created_idx ON events (created_at)`.execute(db);
  await sql`CREATE INDEX call_timeline_at_idx ON call_timeline (at)`.execute(db);
  await sql`CREATE INDEX call_idempotency_keys_created_idx ON call_idempotency_keys (created_at)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX call_idempotency_keys_created_idx`.execute(db);
  await sql`DROP INDEX call_timeline_at_idx`.execute(db);
  await sql`DROP INDEX events_created_idx`.execute(db);
  await sql`DROP INDEX webhook_deliveries_event_idx`.execute(db);
  await sql`DROP INDEX webhook_deliveries_final_created_idx`.execute(db);
  await sql`DROP TRIGGER webhook_deliveries_counted_delete ON webhook_deliveries`.execute(db);
  await sql`DROP TRIGGER webhook_deliveries_counted_update ON webhook_deliveries`.execute(db);
  await sql`DROP TRIGGER webhook_deliveries_counted_insert ON webhook_deliveries`.execute(db);
  await db.schema.dropTable('webhook_delivery_counts').execute();
  await db.schema.alterTable('events').dropColumn('traceparent').execute();
}
