// Switching an endpoint off (or the automatic switch-off) no longer rewrites its pending deliveries in
// the request: it records a cut, `dropped_before_seq`, and every pending delivery of the endpoint with
// a lower seq counts as abandoned from that moment (never claimed, listed as abandoned) until the
// clean-up marks it so in bounded batches. The partial index finds those rows, and counts them, by
// endpoint and seq.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('webhooks')
    .addColumn('dropped_before_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`CREATE INDEX webhook_deliveries_pending_seq_idx ON webhook_deliveries (webhook_id, seq)
            WHERE status = 'pending'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX webhook_deliveries_pending_seq_idx`.execute(db);
  await db.schema.alterTable('webhooks').dropColumn('dropped_before_seq').execute();
}
