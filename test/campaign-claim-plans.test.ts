// A campaign created after PostgreSQL last analysed campaign_contacts looks to the planner like a
// campaign of one contact. The dispatcher's statements that lock contacts and then update them must still
// reach the locked rows by their address (a TID scan), never by walking the campaign's contacts: with a
// walk, each claim of a 100,000-contact campaign took seconds. The settlement of a progress batch's calls
// finds each contact by its primary key, not through the index of contacts being called, which such
// statistics make look empty. auto_explain, loaded into the session the statements run on, shows the
// plans they ran with.
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
    expect(lookups[0]).not.toContain('ANY ($1)');
    expect(lookups[1]).toContain('ANY ($1)');
    for (const plan of lookups) {
      expect(plan).toContain('campaign_contacts_pkey');
      expect(plan).not.toContain('campaign_contacts_calling_idx');
    }
  });
});
