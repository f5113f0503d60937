// A campaign created after PostgreSQL last analysed campaign_contacts looks to the planner like a
// campaign of one contact. The dispatcher's statements that lock contacts and then update them must still
// reach the locked rows by their address (a TID scan), never by walking the campaign's contacts: with a
// walk, each claim of a 100,000-contact campaign took seconds. The settlement of a progress batch's calls
// finds each contact by its primary key, not through the index of contacts being called, which such
// statistics make look empty; and when the contacts were emptied and vacuumed before the campaign, it
// still reads each call by its id first, under the generic plan too. auto_explain, loaded into the
// session the statements run on, shows the plans they ran with.
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../db/schema.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { createCampaign } from './support/campaigns.js';
import {
  claimDueContacts,
  settleAttemptsOfCalls,
  settleEndedAttempts,
  settleRefusedAttempt,
} from '../src/campaigns/dispatch/queries.js';

const CONTACTS = 2_000;
const EARLIER_CALLS = 20_000;

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;
let pool: pg.Pool;
let explained: Kysely<Database>;
const notices: string[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  org = await createTestOrg(database.db, { planId: 'scale' });
  // One connection, reporting the plan of every statement it runs to the test as a notice.
  pool = new pg.Pool({ connectionString: database.url, max: 1 });
  pool.on('connect', (client) => {
    client.on('notice', (notice) => notices.push(notice.message ?? ''));
  });
  explained = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
});

afterAll(async () => {
  await explained?.destroy();
  await app?.close();
  await database?.drop();
});

/** The plans of the statements `work` runs on the explained connection (the pool's only one). */
async function plansOf(work: (db: Kysely<Database>) => Promise<unknown>): Promise<string> {
  await sql`LOAD 'auto_explain'`.execute(explained);
  await sql`SET auto_explain.log_level = notice`.execute(explained);
  await sql`SET auto_explain.log_min_duration = 0`.execute(explained);
  notices.length = 0;
  try {
    await work(explained);
  } finally {
    await sql`SET auto_explain.log_min_duration = -1`.execute(explained);
  }
  return notices.join('\n');
}

/** The update plans of a progress batch's settlement: first as planned for its arguments, then generic. */
async function settlementPlans(): Promise<string[]> {
  // Prepared, it may run with a plan made for its arguments or with the generic one: both are read.
  const plans = await plansOf(async (db) => {
    await settleAttemptsOfCalls(db, [randomUUID(), randomUUID()]);
    await sql`SET plan_cache_mode = force_generic_plan`.execute(db);
    try {
      await settleAttemptsOfCalls(db, [randomUUID(), randomUUID()]);
    } finally {
      await sql`RESET plan_cache_mode`.execute(db);
    }
  });
  const lookups = plans.split('Update on campaign_contacts cc').slice(1);
  expect(lookups).toHaveLength(2);
  return lookups;
}

/** The plan of a campaign_contacts update, from its Update node on. */
function updatePlan(plans: string): string {
  const start = plans.indexOf('Update on campaign_contacts cc');
  expect(start).toBeGreaterThanOrEqual(0);
  return plans.slice(start);
}

describe('the dispatcher on a campaign newer than the statistics', () => {
  let campaignId: string;
  let claimedContact: string;

  beforeAll(async () => {
    const contacts = Array.from({ length: CONTACTS }, (_, i) => ({
      org_id: org.orgId,
      phone_e164: `+9173${String(i).padStart(8, '0')}`,
      consent_capture: 'manual' as const,
      metadata: '{}',
    }));
    await database.db.insertInto('contacts').values(contacts).execute();
    const client = app.client(org.key);
    // The statistics know an earlier campaign over the same contacts, and nothing of the next.
    await createCampaign(client, { agent_id: org.agentId, contacts: { filter: {} } });
    await sql`ANALYZE campaign_contacts`.execute(database.db);
    campaignId = (await createCampaign(client, { agent_id: org.agentId, contacts: { filter: {} } })).id;
  });

  it('claims contacts by the addresses it locked', async () => {
    const now = new Date();
    let claimed = 0;
    const plans = await plansOf(async (db) => {
      const batch = await db
        .transaction()
        .execute((trx) => claimDueContacts(trx, { id: campaignId, excludedConsent: [] }, 100, now, now));
      claimed = batch.claimed.length;
      claimedContact = batch.claimed[0]!.contact_id;
    });

    expect(claimed).toBe(100);
    expect(updatePlan(plans)).toMatch(/Tid Scan on campaign_contacts cc .*\n\s*TID Cond: \(ctid = ANY /);
  });

  it('settles ended and refused attempts by the addresses they locked', async () => {
    const plans = await plansOf(async (db) => {
      await settleEndedAttempts(db, campaignId);
      // The claimed contact's attempt before it was recorded: the refusal settles it.
      await settleRefusedAttempt(db, campaignId, claimedContact, 0, new Date());
    });

    const updates = plans.split('Update on campaign_contacts cc').slice(1);
    expect(updates).toHaveLength(2);
    expect(updates[0]).toMatch(/Tid Scan on campaign_contacts cc .*\n\s*TID Cond: \(ctid = e\.row_id\)/);
    expect(updates[1]).toMatch(/Tid Scan on campaign_contacts cc .*\n\s*TID Cond: \(ctid = r\.row_id\)/);
  });

  it("settles a progress batch's attempts through each contact's primary key", async () => {
    const lookups = await settlementPlans();
    expect(lookups[0]).not.toContain('ANY ($1)');
    expect(lookups[1]).toContain('ANY ($1)');
    for (const plan of lookups) {
      expect(plan).toContain('campaign_contacts_pkey');
      expect(plan).not.toContain('campaign_contacts_calling_idx');
    }
  });
});

describe('the settlement on a campaign created after every earlier one was deleted', () => {
  // Emptied and vacuumed, campaign_contacts holds no rows as far as the planner knows, however many the
  // next campaign adds until the next ANALYZE: the state a benchmark run that starts afresh leaves.
  beforeAll(async () => {
    await sql`DELETE FROM campaign_call_counts`.execute(database.db);
    await sql`DELETE FROM campaigns`.execute(database.db);
    await sql`VACUUM (ANALYZE) campaign_contacts`.execute(database.db);
    // Earlier calls (none of a campaign), so that reading calls by id takes an index, as in any real database.
    await sql`
      INSERT INTO calls (id, org_id, agent_id, status, from_e164, to_e164, language, max_duration_sec,
        rate_paise_per_minute, hold_paise, metadata, provider, provider_call_id, progress_cursor, reason, ended_at, created_at)
      SELECT gen_random_uuid(), ${org.orgId}::uuid, ${org.agentId}::uuid, 'no_answer', '+918045678901',
        '+9198' || lpad(i::text, 8, '0'), 'en-IN', 600, 200, 2000, '{}', 'simulator', 'plans_' || i, 3, 'no_answer', now(), now()
      FROM generate_series(1, ${EARLIER_CALLS}::int) AS i`.execute(database.db);
    await sql`ANALYZE calls`.execute(database.db);
    await createCampaign(app.client(org.key), { agent_id: org.agentId, contacts: { filter: {} } });
  });

  it("still finds each call first, then its contact by the contact's key", async () => {
    const lookups = await settlementPlans();
    for (const plan of lookups) expectLookupsByKey(plan);
  });
});

/**
 * That a settlement's plan reads the calls by their ids, locks each contact by its key and updates it by
 * the address the lock returned: never a walk of the contacts or of the campaign's calls, which for a big
 * campaign costs most of a second a batch.
 */
function expectLookupsByKey(plan: string): void {
  expect(plan).toMatch(
    /(Index Scan using calls_pkey on calls|Index Scan on calls_pkey) .*\n\s*Index Cond: \(id = ANY /,
  );
  expect(plan).toMatch(/Tid Scan on campaign_contacts cc .*\n\s*TID Cond: \(ctid = e\.row_id\)/);
  const scans = plan
    .split('\n')
    .flatMap((line, i, lines) => (line.includes('campaign_contacts_pkey') ? [lines[i + 1]] : []));
  expect(scans.length).toBeGreaterThan(0);
  for (const next of scans)
    expect(next).toMatch(/Index Cond: \(\(campaign_id = c\.campaign_id\) AND \(contact_id = c\.campaign_contact_id\)/);
}
