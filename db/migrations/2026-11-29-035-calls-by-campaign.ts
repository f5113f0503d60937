// GET /calls?campaign_id=: a campaign's calls newest first, all of them or in one status, read along two
// partial indexes (only campaign calls are in them), so a page costs its own length however many calls
// the campaign placed. The list's total comes from campaign_call_counts, a campaign's ended calls by
// ending status, kept by a trigger (db/functions/count_campaign_calls.sql), plus its calls not yet
// ended, counted along the status index: no more than the campaign's max_concurrency.
//
// A trigger rather than the service's own counter writes: an instance still running the previous
// release, during a rolling upgrade, ends campaign calls too, and must move the counts all the same.
// It is deferred to the commit, so its row lock comes after every other lock of the transaction (the
// call, the org's balance, the org's status counters) and cannot close a cycle with them.
//
// The indexes are built as the earlier migrations build theirs, with a plain CREATE INDEX: the migrator
// applies every pending migration inside one transaction, where CREATE INDEX CONCURRENTLY cannot run.
// Writes to calls wait while the indexes are built (reads go on). The table is locked against writes
// first, so the counts taken next match the calls exactly when the trigger takes over.
import { readFileSync } from 'node:fs';
import { sql, type Kysely } from 'kysely';
import { projectFile } from '../../src/project-files.js';

const ENDINGS = sql.raw(`'completed', 'failed', 'no_answer', 'busy', 'canceled'`);

export async function up(db: Kysely<any>): Promise<void> {
  await sql`LOCK TABLE calls IN SHARE ROW EXCLUSIVE MODE`.execute(db);
  await sql`CREATE INDEX calls_campaign_created_idx ON calls (campaign_id, created_at DESC, id DESC)
            WHERE campaign_id IS NOT NULL`.execute(db);
  await sql`CREATE INDEX calls_campaign_status_created_idx ON calls (campaign_id, status, created_at DESC, id DESC)
            WHERE campaign_id IS NOT NULL`.execute(db);

  await sql`
    CREATE TABLE campaign_call_counts (
      campaign_id uuid NOT NULL,
      status text NOT NULL CHECK (status IN (${ENDINGS})),
      count bigint NOT NULL,
      PRIMARY KEY (campaign_id, status)
    )`.execute(db);
  await sql`
    INSERT INTO campaign_call_counts (campaign_id, status, count)
    SELECT campaign_id, status, count(*) FROM calls
    WHERE campaign_id IS NOT NULL AND status IN (${ENDINGS})
    GROUP BY campaign_id, status`.execute(db);
  // The trigger function is kept with the others in db/functions; the triggers need it to exist now.
  await sql.raw(readFileSync(projectFile('db/functions/count_campaign_calls.sql'), 'utf8')).execute(db);
  await sql`
    CREATE CONSTRAINT TRIGGER calls_campaign_counted_insert AFTER INSERT ON calls
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN (NEW.campaign_id IS NOT NULL AND NEW.status IN (${ENDINGS}))
    EXECUTE FUNCTION count_campaign_calls()`.execute(db);
  await sql`
    CREATE CONSTRAINT TRIGGER calls_campaign_counted_update AFTER UPDATE OF status, campaign_id ON calls
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
    WHEN ((OLD.campaign_id, OLD.status) IS DISTINCT FROM (NEW.campaign_id, NEW.status)
          AND ((OLD.campaign_id IS NOT NULL AND OLD.status IN (${ENDINGS}))
               OR (NEW.campaign_id IS NOT NULL AND NEW.status IN (${ENDINGS}))))
    EXECUTE FUNCTION count_campaign_calls()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP TRIGGER calls_campaign_counted_update ON calls`.execute(db);
  await sql`DROP TRIGGER calls_campaign_counted_insert ON calls`.execute(db);
  await sql`DROP TABLE campaign_call_counts`.execute(db);
  await sql`DROP INDEX calls_campaign_status_created_idx`.execute(db);
  await sql`DROP INDEX calls_campaign_created_idx`.execute(db);
}
