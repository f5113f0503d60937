// The delivery worker looks for due deliveries endpoint by endpoint (src/webhooks/delivery-queries.ts,
// findDueDeliveries): the endpoints with pending deliveries are walked along this index, and each one's
// oldest due deliveries are read from it, so a pass costs in endpoints, not in the size of the backlog.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX webhook_deliveries_pending_by_endpoint_idx
            ON webhook_deliveries (webhook_id, next_attempt_at, seq) WHERE status = 'pending'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX webhook_deliveries_pending_by_endpoint_idx`.execute(db);
}
