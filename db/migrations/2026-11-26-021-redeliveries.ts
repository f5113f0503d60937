// Redeliveries are marked, so that an org's pending ones can be counted against its cap
// (REDELIVERIES_PER_ORG) through a small partial index.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE webhook_deliveries ADD COLUMN redelivery boolean NOT NULL DEFAULT false`.execute(db);
  await sql`CREATE INDEX webhook_deliveries_pending_redeliveries_idx
            ON webhook_deliveries (org_id) WHERE status = 'pending' AND redelivery`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX webhook_deliveries_pending_redeliveries_idx`.execute(db);
  await sql`ALTER TABLE webhook_deliveries DROP COLUMN redelivery`.execute(db);
}
