// The org-wide concurrency cap. A plan may bound how many calls each org on it has in progress at once
// (queued, dialing, ringing or in progress, plus placements still waiting for their provider); null,
// the default for every plan that exists now and every new one, means no bound. A test twin is on its
// live org's plan, so the same cap applies to each mode on its own count.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE plans
            ADD COLUMN max_concurrent_calls integer
              CHECK (max_concurrent_calls IS NULL OR max_concurrent_calls >= 1)`.execute(db);
  // The cap counts an org's placements at every POST /calls under it.
  await sql`CREATE INDEX call_placements_org_idx ON call_placements (org_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX call_placements_org_idx`.execute(db);
  await sql`ALTER TABLE plans DROP COLUMN max_concurrent_calls`.execute(db);
}
