// Migration 036 repairs campaign contacts written before it: a contact no longer being called whose
// last_call_id names no call (a placement the provider refused, or one voided) names its latest call
// again, or none; a contact being called remembers its latest call before the current placement, which
// the placement puts back if it never becomes a call. Contacts that name a call are left as they are.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../db/migrations/index.js';
import { connectDatabase, type Db } from '../src/database/connect.js';
import { migrateToLatest } from '../src/database/migrate.js';
import { createTestOrg, type TestOrg } from './support/app.js';
import { insertCampaignRow } from './support/campaigns.js';
import { createEmptyDatabase } from './support/database.js';

const BEFORE_PREVIOUS_CALL = '2026-11-29-035-calls-by-campaign';

let empty: Awaited<ReturnType<typeof createEmptyDatabase>>;
let db: Db;

beforeAll(async () => {
  empty = await createEmptyDatabase();
  db = connectDatabase(empty.url, { poolSize: 2 }).db;
});

afterAll(async () => {
  await db?.destroy();
  await empty?.drop();
});

/** The contact's ended call for `attempt`, `minutesAgo` old; returns its id. */
async function insertCall(
  org: TestOrg,
  campaignId: string,
  contact: { id: string; attempt: number; minutesAgo: number },
): Promise<string> {
  const id = randomUUID();
  await sql`INSERT INTO calls (id, org_id, agent_id, status, reason, from_e164, to_e164, language, max_duration_sec,
              rate_paise_per_minute, hold_paise, metadata, provider, provider_call_id, created_at, ended_at,
              campaign_id, campaign_contact_id, campaign_attempt)
            VALUES (${id}, ${org.orgId}, ${org.agentId}, 'failed', 'provider_error', '+918045678901', '+919812345678',
              'hi-IN', 300, 100, 0, '{}', 'simulator', ${`sim_${id}`}, now() - make_interval(mins => ${contact.minutesAgo}),
              now() - make_interval(mins => ${contact.minutesAgo}), ${campaignId}, ${contact.id}, ${contact.attempt})`.execute(
    db,
  );
  return id;
}

/** A contact of the campaign in `state` after `attempts`, naming `lastCallId`. */
async function insertContact(
  org: TestOrg,
  campaignId: string,
  contact: { id: string; position: number; state: string; attempts: number; lastCallId: string | null },
): Promise<void> {
  await sql`INSERT INTO campaign_contacts (campaign_id, contact_id, org_id, position, phone_e164, consent_capture,
              state, attempts, last_call_id)
            VALUES (${campaignId}, ${contact.id}, ${org.orgId}, ${contact.position}, '+919812345678', 'manual',
              ${contact.state}, ${contact.attempts}, ${contact.lastCallId})`.execute(db);
}

describe('migration 036', () => {
  it('names the latest call again where a contact names no call, and remembers it for contacts being called', async () => {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(migrations) },
      allowUnorderedMigrations: true,
    });
    expect((await migrator.migrateTo(BEFORE_PREVIOUS_CALL)).error).toBeUndefined();
    const org = await createTestOrg(db);
    const campaignId = await insertCampaignRow(db, org, 'Repaired');
    const [calledThenRefused, onlyRefused, called, calling] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    await insertCall(org, campaignId, { id: calledThenRefused, attempt: 1, minutesAgo: 30 });
    const latest = await insertCall(org, campaignId, { id: calledThenRefused, attempt: 2, minutesAgo: 20 });
    const own = await insertCall(org, campaignId, { id: called, attempt: 1, minutesAgo: 10 });
    const before = await insertCall(org, campaignId, { id: calling, attempt: 1, minutesAgo: 5 });
    const placing = randomUUID();
    await insertContact(org, campaignId, {
      id: calledThenRefused,
      position: 1,
      state: 'failed',
      attempts: 3,
      lastCallId: randomUUID(),
    });
    await insertContact(org, campaignId, {
      id: onlyRefused,
      position: 2,
      state: 'pending',
      attempts: 1,
      lastCallId: randomUUID(),
    });
    await insertContact(org, campaignId, { id: called, position: 3, state: 'completed', attempts: 1, lastCallId: own });
    await insertContact(org, campaignId, {
      id: calling,
      position: 4,
      state: 'calling',
      attempts: 2,
      lastCallId: placing,
    });

    await migrateToLatest(db);

    const { rows } = await sql<{ contact_id: string; last_call_id: string | null; previous_call_id: string | null }>`
      SELECT contact_id, last_call_id, previous_call_id FROM campaign_contacts
      WHERE campaign_id = ${campaignId} ORDER BY position`.execute(db);
    expect(rows).toEqual([
      { contact_id: calledThenRefused, last_call_id: latest, previous_call_id: null },
      { contact_id: onlyRefused, last_call_id: null, previous_call_id: null },
      { contact_id: called, last_call_id: own, previous_call_id: null },
      { contact_id: calling, last_call_id: placing, previous_call_id: before },
    ]);
  });
});
