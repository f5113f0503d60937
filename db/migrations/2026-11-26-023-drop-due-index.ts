// The pending deliveries are found endpoint by endpoint (migration 012), so the index of all pending
// deliveries by due time has no query of its own left. Kept, it was a trap: statistics gathered while
// the queue happened to be empty made it look as cheap as the per-endpoint index, and a backlog that
// arrived next was then walked in full for each endpoint on every claim pass (a measured drop from
// about 2,000 to about 430 deliveries a second). Without it, every update of a delivery also maintains
// one index less.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS webhook_deliveries_due_idx`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`.execute(
    db,
  );
}
