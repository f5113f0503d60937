// A campaign's ended calls are counted by status in campaign_call_counts, which GET /calls?campaign_id=
// reads for its total. A database that already holds campaign calls is counted by migration 035, and
// the counts then follow every change of a call's status made by any code, even SQL that knows nothing
// of them (an instance of the previous release during a rolling upgrade): a trigger keeps them.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../db/migrations/index.js';
import { connectDatabase, type Db } from '../src/database/connect.js';
import { migrateToLatest } from '../src/database/migrate.js';
import { listCalls } from '../src/calls/service.js';
import { createTestOrg, type TestOrg } from './support/app.js';
import { insertCampaignRow } from './support/campaigns.js';
import { createEmptyDatabase } from './support/database.js';

const BEFORE_COUNTS = '2026-11-29-034-campaign-requests';

let empty: Awaited<ReturnType<typeof createEmptyDatabase>>;
let db: Db;

beforeAll(async () => {
  empty = await createEmptyDatabase();
  db = connectDatabase(empty.url, { poolSize: 4 }).db;
});

afterAll(async () => {
  await db?.destroy();
  await empty?.drop();
});

/** A call of the org in `status` (of the campaign when given), written as plain SQL; returns its id. */
async function insertCall(org: TestOrg, status: string, campaignId: string | null): Promise<string> {
  const id = randomUUID();
  const ended = !['queued', 'dialing', 'ringing', 'in_progress'].includes(status);
  await sql`INSERT INTO calls (id, org_id, agent_id, status, from_e164, to_e164, language, max_duration_sec,
              rate_paise_per_minute, hold_paise, metadata, provider, provider_call_id, created_at, ended_at,
              campaign_id, campaign_contact_id, campaign_attempt)
            VALUES (${id}, ${org.orgId}, ${org.agentId}, ${status}, '+918045678901', '+919812345678', 'hi-IN', 300,
              100, 0, '{}', 'simulator', ${`sim_${id}`}, now(), ${ended ? sql`now()` : null},
              ${campaignId}, ${campaignId === null ? null : randomUUID()}, ${campaignId === null ? null : 1})`.execute(
    db,
  );
  return id;
}

/** The campaign's counts as stored (as `on`, a transaction, sees them), by status. */
async function countsOf(campaignId: string, on: Db = db): Promise<Record<string, number>> {
  const rows = await on
    .selectFrom('campaign_call_counts')
    .select(['status', 'count'])
    .where('campaign_id', '=', campaignId)
    .where('count', '<>', 0)
    .execute();
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.count)]));
}

/** The campaign's calls as GET /calls?campaign_id= counts them (in `status` when given). */
async function listedTotal(org: TestOrg, campaignId: string, status?: 'busy' | 'queued'): Promise<number> {
  return (await listCalls(db, org.orgId, { status, campaignId, limit: 1, start: { offset: 0 } })).total;
}

describe('campaign call counts', () => {
  it('counts existing calls at the migration, then follows each status change, however it is written', async () => {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(migrations) },
      allowUnorderedMigrations: true,
    });
    expect((await migrator.migrateTo(BEFORE_COUNTS)).error).toBeUndefined();
    const org = await createTestOrg(db);
    const first = await insertCampaignRow(db, org, 'Counted');
    const second = await insertCampaignRow(db, org, 'Counted');
    for (const status of ['busy', 'busy', 'completed', 'failed', 'queued', 'in_progress']) {
      await insertCall(org, status, first);
    }
    await insertCall(org, 'no_answer', second);
    await insertCall(org, 'busy', null);

    await migrateToLatest(db);
    expect(await countsOf(first)).toEqual({ busy: 2, completed: 1, failed: 1 });
    expect(await countsOf(second)).toEqual({ no_answer: 1 });
    expect(await listedTotal(org, first)).toBe(6);
    expect(await listedTotal(org, first, 'busy')).toBe(2);
    expect(await listedTotal(org, first, 'queued')).toBe(1);

    // Ended by a plain UPDATE, as any release ends a call: counted once it commits.
    const queued = await db
      .selectFrom('calls')
      .select('id')
      .where('campaign_id', '=', first)
      .where('status', '=', 'queued')
      .executeTakeFirstOrThrow();
    await db.transaction().execute(async (trx) => {
      await sql`UPDATE calls SET status = 'busy', ended_at = now() WHERE id = ${queued.id}`.execute(trx);
      // Deferred to the commit, so the counters' row lock is the transaction's last: not moved yet.
      expect(await countsOf(first, trx)).toEqual({ busy: 2, completed: 1, failed: 1 });
    });
    expect(await countsOf(first)).toEqual({ busy: 3, completed: 1, failed: 1 });
    expect(await listedTotal(org, first)).toBe(6);
    expect(await listedTotal(org, first, 'busy')).toBe(3);
    expect(await listedTotal(org, first, 'queued')).toBe(0);

    // A call written already ended, and one moved to another campaign by hand, are counted too.
    await insertCall(org, 'busy', second);
    await sql`UPDATE calls SET campaign_id = ${second} WHERE id = ${queued.id}`.execute(db);
    expect(await countsOf(first)).toEqual({ busy: 2, completed: 1, failed: 1 });
    expect(await countsOf(second)).toEqual({ busy: 2, no_answer: 1 });
    expect(await listedTotal(org, first)).toBe(5);
    expect(await listedTotal(org, second)).toBe(3);
  });
});
