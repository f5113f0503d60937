// Promises kept at their edges. Rate-limit buckets remember their latest hit, so a bucket stops counting
// exactly 60 s after it (db/functions/rate_limit_take.sql). An endpoint keeps every secret a rotation
// replaced, each with its own end of grace, instead of only the last one.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('rate_limit_buckets').addColumn('last_ms', 'bigint').execute();
  await sql`UPDATE rate_limit_buckets SET last_ms = second * 1000 + 999`.execute(db);
  await sql`ALTER TABLE rate_limit_buckets ALTER COLUMN last_ms SET NOT NULL`.execute(db);

  await db.schema
    .alterTable('webhooks')
    .addColumn('previous_secrets', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .execute();
  await sql`
    UPDATE webhooks SET previous_secrets = jsonb_build_array(
      jsonb_build_object('secret', previous_secret, 'expires_at', previous_secret_expires_at))
    WHERE previous_secret IS NOT NULL AND previous_secret_expires_at > now()`.execute(db);
  await db.schema
    .alterTable('webhooks')
    .dropColumn('previous_secret')
    .dropColumn('previous_secret_expires_at')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_expires_at', 'timestamptz')
    .execute();
  await sql`
    UPDATE webhooks SET previous_secret = previous_secrets->0->>'secret',
                        previous_secret_expires_at = (previous_secrets->0->>'expires_at')::timestamptz
    WHERE jsonb_array_length(previous_secrets) > 0`.execute(db);
  await db.schema.alterTable('webhooks').dropColumn('previous_secrets').execute();
  await db.schema.alterTable('rate_limit_buckets').dropColumn('last_ms').execute();
}
