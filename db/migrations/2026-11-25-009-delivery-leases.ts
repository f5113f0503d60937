// One delivery path: a delivery's lease is the record of a send in flight. The lease names its owner
// (the process that claimed it), and an endpoint being deleted is marked first (deleted_at), so no new
// lease is taken on it while the deletion waits for the leases already out (src/webhooks/delivery/in-flight.ts).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhooks').addColumn('deleted_at', 'timestamptz').execute();
  await db.schema.alterTable('webhook_deliveries').addColumn('lease_owner', 'text').execute();
  // The deliveries out on lease, by endpoint: what a deletion waits for.
  // record_webhook_attempt now checks the lease's owner too (db/functions/record_webhook_attempt.sql).
  await sql`DROP FUNCTION record_webhook_attempt(uuid, timestamptz, text, integer, timestamptz, uuid, uuid, integer,
            text, text, integer, timestamptz, boolean, integer, interval)`.execute(db);
  await sql`DELETE FROM schema_functions WHERE file = 'record_webhook_attempt.sql'`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_leased_idx ON webhook_deliveries (webhook_id, lease_expires_at)
            WHERE lease_expires_at IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX webhook_deliveries_leased_idx`.execute(db);
  await db.schema.alterTable('webhook_deliveries').dropColumn('lease_owner').execute();
  await db.schema.alterTable('webhooks').dropColumn('deleted_at').execute();
}
