// The campaign dispatcher in one process, on an injected clock: windows read in the campaign's time
// zone (across a daylight-saving change), its concurrency, the do-not-call list and consent checked at
// dial time, the pause when credits run out and the resume, retries of the chosen endings only, the
// end time, cancel, and campaign.finished once with counters that add up (and GET /calls totals by
// campaign that match the calls). Passes are run by hand (runDispatchPass, what the worker's job runs),
// so each step is observed exactly.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { blocksAnother, createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, startTestApp, type TestApp } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import {
  ALWAYS,
  campaignCalls,
  createCampaign,
  createContacts,
  fetchCampaign,
  finishedEvents,
} from './support/campaigns.js';
import { runDispatchPass } from '../src/campaigns/dispatch/pass.js';
import { activeCampaignIds, claimDueContacts, recoverAbandonedAttempts } from '../src/campaigns/dispatch/queries.js';
import { addCredits } from '../src/orgs/service.js';
import { refuse, testProviderModule, TestProvider } from './support/test-provider.js';

let database: TestDatabase;
let clock: ManualClock;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  clock = new ManualClock(Date.parse('2026-03-06T23:00:00Z'));
  // No background work: each pass is run by the test, and calls stay where placing left them.
  app = await startTestApp(database, { clock, workers: false });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Cancels the campaign's calls in progress through POST /calls/{id}/cancel. */
async function cancelCalls(client: ReturnType<TestApp['client']>, campaignId: string): Promise<void> {
  for (const call of await campaignCalls(database.db, campaignId)) {
    const { response } = await client.POST('/calls/{id}/cancel', { params: { path: { id: call.id } } });
    expect(response.status).toBe(200);
  }
}

/** How many claimed contacts the dispatcher has counted with `outcome` so far. */
async function placementsCounted(outcome: string): Promise<number> {
  const { values } = await app.deps.metrics.campaignPlacements.get();
  return values.find((value) => value.labels.outcome === outcome)?.value ?? 0;
}

/** Counters that must add up to the contacts in all. */
function sumOfStates(counters: Awaited<ReturnType<typeof fetchCampaign>>['counters']): number {
  const { pending, in_progress, completed, failed, no_answer, busy, expired, canceled, skipped } = counters;
  return pending + in_progress + completed + failed + no_answer + busy + expired + canceled + skipped.total;
}

describe('windows in the campaign time zone', () => {
  it('waits for the first window after a daylight-saving change, then dials inside it only', async () => {
    clock.set(Date.parse('2026-03-06T23:00:00Z')); // Friday 18:00 in New York (EST, UTC-5)
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const contacts = await createContacts(client, [testNumber('1111'), testNumber('1112')]);
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: contacts },
      max_concurrency: 1,
      schedule: {
        starts_at: '2026-03-06T12:00:00Z',
        timezone: 'America/New_York',
        windows: [{ days: ['mon'], start: '09:00', end: '10:00' }],
      },
    });
    // Clocks go forward on Sunday 8 March: Monday 09:00 is 13:00 UTC (EDT), not 14:00 (EST).
    const first = await runDispatchPass(app.deps, campaign.id);
    expect(first).toEqual({ placed: 0, nextAt: new Date('2026-03-09T13:00:00Z') });
    clock.set(Date.parse('2026-03-09T12:59:59Z'));
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(0);
    clock.set(Date.parse('2026-03-09T13:00:00Z'));
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(1);
    expect(await fetchCampaign(client, campaign.id)).toMatchObject({ status: 'running' });
    // 10:00 local closes the window: the second contact waits for next Monday.
    await cancelCalls(client, campaign.id);
    clock.set(Date.parse('2026-03-09T14:00:00Z'));
    const closed = await runDispatchPass(app.deps, campaign.id);
    expect(closed).toEqual({ placed: 0, nextAt: new Date('2026-03-16T13:00:00Z') });
    expect((await campaignCalls(database.db, campaign.id)).length).toBe(1);
  });

  it('reads the weekday in the campaign zone, not in UTC', async () => {
    // Monday 00:30 in Kolkata is Sunday 19:00 UTC.
    clock.set(Date.parse('2026-03-15T19:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const contacts = await createContacts(client, [testNumber('1113')]);
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: contacts },
      schedule: { timezone: 'Asia/Kolkata', windows: [{ days: ['mon'], start: '00:00', end: '01:00' }] },
    });
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(1);
  });
});

describe('dial-time rules', () => {
  it('shows a contact claimed by a pass as pending until its call is placed', async () => {
    clock.set(Date.parse('2026-04-01T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, [testNumber('1301'), testNumber('1302')]) },
    });
    // A pass that has claimed both and not yet placed either (as while its org is at its call cap).
    const { claimed } = await claimDueContacts(
      database.db,
      { id: campaign.id, excludedConsent: [] },
      2,
      clock.now(),
      new Date(clock.now().getTime() + 60_000),
    );
    expect(claimed).toHaveLength(2);
    expect((await fetchCampaign(client, campaign.id)).counters).toMatchObject({ pending: 2, in_progress: 0 });
    const listed = await client.GET('/campaigns/{id}/contacts', { params: { path: { id: campaign.id } } });
    expect(listed.data!.data.map((contact) => contact.state)).toEqual(['pending', 'pending']);

    // Given back and claimed again by a pass that places them: both are being called.
    expect(await recoverAbandonedAttempts(database.db, campaign.id, new Date(clock.now().getTime() + 61_000))).toBe(2);
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(2);
    expect((await fetchCampaign(client, campaign.id)).counters).toMatchObject({ pending: 0, in_progress: 2 });
  });

  it('never has more than max_concurrency calls in progress', async () => {
    clock.set(Date.parse('2026-04-01T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const numbers = Array.from({ length: 6 }, (_, i) => testNumber(`12${String(i).padStart(2, '0')}`));
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, numbers) },
      max_concurrency: 2,
    });
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(2);
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(0);
    const read = await fetchCampaign(client, campaign.id);
    expect(read.counters).toMatchObject({ in_progress: 2, pending: 4, calls_placed: 2, contacts_total: 6 });
  });

  it('dials a due retry before first attempts, first attempts in list order, and a retry not yet due waits', async () => {
    clock.set(Date.parse('2026-04-01T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const numbers = Array.from({ length: 4 }, (_, i) => testNumber(`13${String(i).padStart(2, '0')}`));
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, numbers) },
      max_concurrency: 2,
    });
    // The list's last contact waits for a retry that is due, the third for one an hour away.
    const retryAt = async (position: number, at: Date) => {
      await sql`UPDATE campaign_contacts SET attempts = 1, next_attempt_at = ${at}
                WHERE campaign_id = ${campaign.id} AND position = ${position}`.execute(database.db);
    };
    await retryAt(4, new Date(clock.now().getTime() - 60_000));
    await retryAt(3, new Date(clock.now().getTime() + 3_600_000));
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(2);
    const { rows } = await sql<{ position: number; state: string; attempts: number }>`
      SELECT position, state, attempts FROM campaign_contacts WHERE campaign_id = ${campaign.id}
      ORDER BY position`.execute(database.db);
    expect(rows).toEqual([
      { position: 1, state: 'calling', attempts: 1 },
      { position: 2, state: 'pending', attempts: 0 },
      { position: 3, state: 'pending', attempts: 1 },
      { position: 4, state: 'calling', attempts: 2 },
    ]);
  });

  it('skips a number put on the do-not-call list after creation, and excluded consent', async () => {
    clock.set(Date.parse('2026-04-01T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const [listed, kept, imported] = [testNumber('1301'), testNumber('1302'), testNumber('1303')];
    const ids = [
      ...(await createContacts(client, [listed, kept])),
      ...(await createContacts(client, [imported], 'imported')),
    ];
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: ids },
      exclude_consent_capture: ['imported'],
    });
    const added = await client.POST('/suppressions', { body: { phone_e164: listed, reason: 'opted_out' } });
    expect(added.response.status).toBe(201);
    const [placedBefore, suppressedBefore] = [await placementsCounted('placed'), await placementsCounted('suppressed')];
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(1);
    expect(await placementsCounted('placed')).toBe(placedBefore + 1);
    expect(await placementsCounted('suppressed')).toBe(suppressedBefore + 1);
    expect((await campaignCalls(database.db, campaign.id)).map((call) => call.to_e164)).toEqual([kept]);
    const read = await fetchCampaign(client, campaign.id);
    expect(read.counters.skipped).toEqual({ total: 2, suppressed: 1, consent_excluded: 1 });
    const { data } = await client.GET('/campaigns/{id}/contacts', { params: { path: { id: campaign.id } } });
    expect(data!.data.map((row) => [row.phone_e164, row.state, row.skip_reason])).toEqual([
      [listed, 'skipped', 'suppressed'],
      [kept, 'in_progress', null],
      [imported, 'skipped', 'consent_excluded'],
    ]);
  });

  it('pauses when a hold cannot be taken, and carries on when resumed', async () => {
    clock.set(Date.parse('2026-04-01T10:00:00Z'));
    // One call's hold is 10 minutes at 200 paise a minute: there is enough for one call, not two.
    const org = await createTestOrg(database.db, { credits: 3_000 });
    const client = app.client(org.key);
    const numbers = [testNumber('1401'), testNumber('1402'), testNumber('1403')];
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, numbers) },
      max_concurrency: 3,
    });
    const lackingBefore = await placementsCounted('insufficient_credits');
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(1);
    expect(await placementsCounted('insufficient_credits')).toBe(lackingBefore + 2);
    expect(await fetchCampaign(client, campaign.id)).toMatchObject({
      status: 'paused',
      paused_reason: 'insufficient_credits',
      counters: { in_progress: 1, pending: 2 },
    });
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(0);
    await addCredits(database.db, org.orgId, 10_000);
    const resumed = await client.POST('/campaigns/{id}/resume', { params: { path: { id: campaign.id } } });
    expect(resumed.data?.data).toMatchObject({ status: 'running', paused_reason: null });
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(2);
  });
});

describe('recovery beside another pass', () => {
  it('gives a lost attempt back uncounted, naming the call the contact named before it', async () => {
    clock.set(Date.parse('2026-04-01T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const [contactId] = await createContacts(client, [testNumber('1702')]);
    const campaign = await createCampaign(client, { agent_id: org.agentId, contacts: { contact_ids: [contactId!] } });
    // Attempt 2 was recorded for a placement that came to nothing; attempt 1 was a call.
    const earlierCall = randomUUID();
    await sql`UPDATE campaign_contacts SET state = 'calling', attempts = 2, last_call_id = ${randomUUID()},
                previous_call_id = ${earlierCall}
              WHERE campaign_id = ${campaign.id}`.execute(database.db);
    expect(await recoverAbandonedAttempts(database.db, campaign.id, clock.now())).toBe(1);
    const { rows } = await sql<{ state: string; attempts: number; last_call_id: string }>`
      SELECT state, attempts, last_call_id FROM campaign_contacts WHERE campaign_id = ${campaign.id}`.execute(
      database.db,
    );
    expect(rows).toEqual([{ state: 'pending', attempts: 1, last_call_id: earlierCall }]);
  });

  it('gives a lost attempt back only while the contact still names the lost placement', async () => {
    clock.set(Date.parse('2026-04-01T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const phone = testNumber('1701');
    const [contactId] = await createContacts(client, [phone]);
    const campaign = await createCampaign(client, { agent_id: org.agentId, contacts: { contact_ids: [contactId!] } });
    // Attempt 1 was recorded for a placement that came to nothing: a pass may give it back.
    const lostId = randomUUID();
    await sql`UPDATE campaign_contacts SET state = 'calling', attempts = 1, last_call_id = ${lostId}
              WHERE campaign_id = ${campaign.id}`.execute(database.db);
    const renewed = randomUUID();
    let recovered: Promise<number> | undefined;
    // Another pass gives it back and records attempt 1 again, for a new placement; before it commits,
    // this pass has already found the attempt lost and waits for the contact's row.
    await database.db.transaction().execute(async (trx) => {
      await sql`UPDATE campaign_contacts SET last_call_id = ${renewed}, updated_at = clock_timestamp()
                WHERE campaign_id = ${campaign.id}`.execute(trx);
      await sql`
        INSERT INTO call_placements (id, org_id, agent_id, state, provider, provider_settings, from_e164, to_e164,
          language, max_duration_sec, rate_paise_per_minute, hold_paise, metadata, created_at, recover_at,
          campaign_id, campaign_contact_id, campaign_attempt)
        VALUES (${renewed}, ${org.orgId}, ${org.agentId}, 'pending', 'simulator', '{}', '+919800000000', ${phone},
          'en-IN', 600, 200, 2000, '{}', now(), now() + interval '1 hour', ${campaign.id}, ${contactId}, 1)`.execute(
        trx,
      );
      recovered = recoverAbandonedAttempts(database.db, campaign.id, clock.now());
      await waitFor('the other pass to wait for the row', () => blocksAnother(trx));
    });
    expect(await recovered).toBe(0);
    const { rows } = await sql<{ state: string; attempts: number; last_call_id: string }>`
      SELECT state, attempts, last_call_id FROM campaign_contacts WHERE campaign_id = ${campaign.id}`.execute(
      database.db,
    );
    expect(rows).toEqual([{ state: 'calling', attempts: 1, last_call_id: renewed }]);
  });
});

describe('a canceled campaign finishing beside a settlement', () => {
  it('cancels an attempt that comes back for a retry while the pass counts, rather than finish around it', async () => {
    clock.set(Date.parse('2026-04-01T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, [testNumber('1604')]) },
      retry: { max_attempts: 3, on: ['busy'], interval_sec: 60 },
    });
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(1);
    const { response } = await client.POST('/campaigns/{id}/cancel', { params: { path: { id: campaign.id } } });
    expect(response.status).toBe(200);
    // Another process settles the attempt for a retry just as this pass cancels the pending contacts: a
    // trigger on that statement (once) moves the contact being called back to pending, as that settle would.
    await sql
      .raw(
        `CREATE TABLE retry_beside_cancel (campaign_id uuid);
         CREATE FUNCTION retry_beside_cancel() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF pg_trigger_depth() = 1 AND current_query() LIKE 'update "campaign_contacts" set "state" = %'
              AND NOT EXISTS (SELECT 1 FROM retry_beside_cancel) THEN
             UPDATE campaign_contacts SET state = 'pending', next_attempt_at = now() + interval '60 seconds'
             WHERE campaign_id = '${campaign.id}' AND state = 'calling';
             INSERT INTO retry_beside_cancel VALUES ('${campaign.id}');
           END IF;
           RETURN NULL;
         END $$;
         CREATE TRIGGER retry_beside_cancel AFTER UPDATE ON campaign_contacts
           FOR EACH STATEMENT EXECUTE FUNCTION retry_beside_cancel();`,
      )
      .execute(database.db);
    try {
      await runDispatchPass(app.deps, campaign.id);
      const { rows } = await sql`SELECT campaign_id FROM retry_beside_cancel`.execute(database.db);
      expect(rows).toHaveLength(1);
      // It was being called when the pass counted: the campaign is not finished around it.
      expect((await fetchCampaign(client, campaign.id)).finished_at).toBeNull();
      expect(await runDispatchPass(app.deps, campaign.id)).toEqual({ placed: 0, nextAt: null });
    } finally {
      await sql
        .raw(
          'DROP TRIGGER retry_beside_cancel ON campaign_contacts; DROP FUNCTION retry_beside_cancel(); DROP TABLE retry_beside_cancel;',
        )
        .execute(database.db);
    }
    const read = await fetchCampaign(client, campaign.id);
    expect(read).toMatchObject({ status: 'canceled', counters: { canceled: 1, pending: 0, calls_placed: 1 } });
    expect(read.finished_at).not.toBeNull();
  });
});

describe('endings', () => {
  it('expires what is left at the end time and finishes once', async () => {
    clock.set(Date.parse('2026-04-06T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, [testNumber('1501'), testNumber('1502')]) },
      schedule: {
        starts_at: '2026-04-06T10:00:00Z',
        ends_at: '2026-04-06T12:00:00Z',
        timezone: 'UTC',
        windows: [{ days: ['tue'], start: '09:00', end: '17:00' }],
      },
    });
    // Monday: no window before the end, so the next pass is at the end.
    expect(await runDispatchPass(app.deps, campaign.id)).toEqual({
      placed: 0,
      nextAt: new Date('2026-04-06T12:00:00Z'),
    });
    clock.set(Date.parse('2026-04-06T12:00:00Z'));
    expect(await runDispatchPass(app.deps, campaign.id)).toEqual({ placed: 0, nextAt: null });
    const read = await fetchCampaign(client, campaign.id);
    expect(read).toMatchObject({ status: 'completed', counters: { expired: 2, contacts_total: 2 } });
    expect(read.finished_at).not.toBeNull();
    await runDispatchPass(app.deps, campaign.id);
    const mine = await finishedEvents(client, campaign.id);
    expect(mine).toHaveLength(1);
    // The event carries the campaign exactly as it reads afterwards.
    expect(mine[0]!.data).toEqual(await fetchCampaign(client, campaign.id));
  });

  it('ends a paused campaign at its end time too: the pass is queued for it, and the sweep finds it', async () => {
    clock.set(Date.parse('2026-04-06T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, [testNumber('1511'), testNumber('1512')]) },
      schedule: { ends_at: '2026-04-06T12:00:00Z', timezone: 'UTC', windows: ALWAYS },
    });
    const paused = await client.POST('/campaigns/{id}/pause', { params: { path: { id: campaign.id } } });
    expect(paused.data?.data).toMatchObject({ status: 'paused' });
    expect(await runDispatchPass(app.deps, campaign.id)).toEqual({
      placed: 0,
      nextAt: new Date('2026-04-06T12:00:00Z'),
    });
    expect(await activeCampaignIds(database.db, clock.now())).not.toContain(campaign.id);
    clock.set(Date.parse('2026-04-06T12:00:00Z'));
    expect(await activeCampaignIds(database.db, clock.now())).toContain(campaign.id);
    expect(await runDispatchPass(app.deps, campaign.id)).toEqual({ placed: 0, nextAt: null });
    const read = await fetchCampaign(client, campaign.id);
    expect(read).toMatchObject({ status: 'completed', paused_reason: null, counters: { expired: 2 } });
    expect(read.finished_at).not.toBeNull();
    expect(await finishedEvents(client, campaign.id)).toHaveLength(1);
    expect(await activeCampaignIds(database.db, clock.now())).not.toContain(campaign.id);
  });

  it('turns a scheduled campaign running at its start, before its first window opens', async () => {
    clock.set(Date.parse('2026-04-06T10:00:00Z')); // a Monday
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, [testNumber('1521')]) },
      schedule: {
        starts_at: '2026-04-06T12:00:00Z',
        timezone: 'UTC',
        windows: [{ days: ['tue'], start: '09:00', end: '17:00' }],
      },
    });
    expect(await runDispatchPass(app.deps, campaign.id)).toEqual({
      placed: 0,
      nextAt: new Date('2026-04-06T12:00:00Z'),
    });
    expect(await fetchCampaign(client, campaign.id)).toMatchObject({ status: 'scheduled' });
    clock.set(Date.parse('2026-04-06T12:00:00Z'));
    expect(await runDispatchPass(app.deps, campaign.id)).toEqual({
      placed: 0,
      nextAt: new Date('2026-04-07T09:00:00Z'),
    });
    expect(await fetchCampaign(client, campaign.id)).toMatchObject({ status: 'running' });
  });

  it('cancel: pending contacts are canceled, calls in progress end, then it finishes', async () => {
    clock.set(Date.parse('2026-04-01T10:00:00Z'));
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const numbers = [testNumber('1601'), testNumber('1602'), testNumber('1603')];
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, numbers) },
      max_concurrency: 1,
    });
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(1);
    const canceled = await client.POST('/campaigns/{id}/cancel', { params: { path: { id: campaign.id } } });
    expect(canceled.data?.data).toMatchObject({ status: 'canceled', counters: { canceled: 2, in_progress: 1 } });
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(0);
    expect((await fetchCampaign(client, campaign.id)).finished_at).toBeNull();
    // The call in progress ends (here by its own cancel): only then is the campaign finished.
    await cancelCalls(client, campaign.id);
    expect(await runDispatchPass(app.deps, campaign.id)).toEqual({ placed: 0, nextAt: null });
    const read = await fetchCampaign(client, campaign.id);
    expect(read).toMatchObject({ status: 'canceled', counters: { canceled: 3, in_progress: 0, calls_placed: 1 } });
    expect(read.finished_at).not.toBeNull();
    expect(sumOfStates(read.counters)).toBe(3);
  });
});

describe('retries and the final event, with calls walked by the simulator', () => {
  let worked: TestApp;
  let workedClock: ManualClock;
  // A provider that refuses every placement, for agents moved to it.
  const refusing = new TestProvider();
  refusing.onPlace = () => refuse('this number cannot be called');

  beforeAll(async () => {
    workedClock = new ManualClock(Date.parse('2026-05-01T10:00:00Z'));
    worked = await startTestApp(database, {
      clock: workedClock,
      config: { simulatorStepMs: 1_000 },
      providers: [testProviderModule(refusing)],
    });
  });

  /** Runs passes, a simulated second apart, until the campaign has finished; returns it then. */
  async function runToFinish(client: ReturnType<TestApp['client']>, campaignId: string) {
    return waitFor(
      'the campaign to finish',
      async () => {
        workedClock.advance(1_000);
        await runDispatchPass(worked.deps, campaignId);
        const current = await fetchCampaign(client, campaignId);
        return current.finished_at !== null && current;
      },
      60_000,
    );
  }

  afterAll(async () => {
    await worked?.close();
  });

  it('retries only the chosen endings, and sends campaign.finished once with counters that add up', async () => {
    const org = await createTestOrg(database.db);
    const client = worked.client(org.key);
    const numbers = {
      busy: testNumber('0001'),
      noAnswer: testNumber('0002'),
      rejected: testNumber('0003'),
      providerError: testNumber('0004'),
      completed: testNumber('9999'),
    };
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, Object.values(numbers)) },
      max_concurrency: 5,
      retry: { max_attempts: 2, on: ['busy', 'failed'], failed_reasons: ['provider_error'], interval_sec: 60 },
      schedule: { timezone: 'UTC', windows: ALWAYS },
    });
    // Simulated time runs a second at a time while the test runs passes; the worker walks the calls.
    const read = await runToFinish(client, campaign.id);
    const calls = await campaignCalls(database.db, campaign.id);
    const attemptsOf = (to: string) => calls.filter((call) => call.to_e164 === to).map((call) => call.attempt);
    expect(attemptsOf(numbers.busy)).toEqual([1, 2]);
    expect(attemptsOf(numbers.noAnswer)).toEqual([1]);
    expect(attemptsOf(numbers.rejected)).toEqual([1]);
    expect(attemptsOf(numbers.providerError)).toEqual([1, 2]);
    expect(attemptsOf(numbers.completed)).toEqual([1]);
    expect(read).toMatchObject({
      status: 'completed',
      counters: { contacts_total: 5, completed: 1, busy: 1, no_answer: 1, failed: 2, pending: 0, calls_placed: 7 },
    });
    expect(sumOfStates(read.counters)).toBe(5);
    // GET /calls?campaign_id= lists the seven, with totals (from counters the calls' endings moved) that
    // match them, by status too.
    const listed = await client.GET('/calls', { params: { query: { campaign_id: campaign.id, limit: 100 } } });
    expect(listed.data!.data.map((call) => call.id).sort()).toEqual(calls.map((call) => call.id).sort());
    expect(listed.data!.pagination.total).toBe(7);
    for (const status of ['completed', 'busy', 'no_answer', 'failed'] as const) {
      const { data } = await client.GET('/calls', { params: { query: { campaign_id: campaign.id, status } } });
      expect(data!.pagination.total, status).toBe(calls.filter((call) => call.status === status).length);
    }
    const charged = await sql<{ paise: string }>`
      SELECT coalesce(sum(credits_debited_paise), 0) AS paise FROM calls WHERE campaign_id = ${campaign.id}`.execute(
      database.db,
    );
    expect(read.counters.credits_charged_paise).toBe(Number(charged.rows[0]!.paise));
    const mine = await finishedEvents(client, campaign.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.data.counters).toEqual(read.counters);
  });

  it('counts a refused placement as a failed attempt that is no call, and keeps naming the latest call', async () => {
    const org = await createTestOrg(database.db);
    const client = worked.client(org.key);
    // The simulator fails 0004 mid-call (a call, reason provider_error) and refuses 0005 at placement.
    const contactIds = await createContacts(client, [testNumber('0004'), testNumber('0005')]);
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: contactIds },
      max_concurrency: 2,
      retry: { max_attempts: 3, on: ['failed'], failed_reasons: ['provider_error'], interval_sec: 60 },
      schedule: { timezone: 'UTC', windows: ALWAYS },
    });
    const firstCall = await waitFor('the first call to fail', async () => {
      workedClock.advance(1_000);
      await runDispatchPass(worked.deps, campaign.id);
      const [call] = await campaignCalls(database.db, campaign.id);
      return call?.status === 'failed' && call;
    });
    // Every later attempt goes to a provider that refuses it.
    await sql`UPDATE agents SET provider = ${refusing.name} WHERE id = ${org.agentId}`.execute(database.db);
    const read = await runToFinish(client, campaign.id);
    expect(read.counters).toMatchObject({ contacts_total: 2, failed: 2, calls_placed: 1 });
    expect(await campaignCalls(database.db, campaign.id)).toHaveLength(1);
    const listed = await client.GET('/campaigns/{id}/contacts', { params: { path: { id: campaign.id } } });
    const seen = listed.data!.data.map(({ state, attempts, last_call_id, last_outcome, last_reason }) => ({
      state,
      attempts,
      last_call_id,
      last_outcome,
      last_reason,
    }));
    const refusedAttempt = { state: 'failed', attempts: 3, last_outcome: 'failed', last_reason: 'provider_error' };
    expect(seen).toEqual([
      { ...refusedAttempt, last_call_id: firstCall.id },
      { ...refusedAttempt, last_call_id: null },
    ]);
    const named = await client.GET('/calls/{id}', { params: { path: { id: firstCall.id } } });
    expect(named.response.status).toBe(200);
  });

  it('does not retry a call that ends after its campaign was canceled', async () => {
    const org = await createTestOrg(database.db);
    const client = worked.client(org.key);
    const campaign = await createCampaign(client, {
      agent_id: org.agentId,
      contacts: { contact_ids: await createContacts(client, [testNumber('0001')]) },
      retry: { max_attempts: 3, on: ['busy'], interval_sec: 60 },
      schedule: { timezone: 'UTC', windows: ALWAYS },
    });
    expect((await runDispatchPass(worked.deps, campaign.id)).placed).toBe(1);
    const canceled = await client.POST('/campaigns/{id}/cancel', { params: { path: { id: campaign.id } } });
    expect(canceled.data?.data).toMatchObject({ status: 'canceled', counters: { in_progress: 1 } });
    const read = await runToFinish(client, campaign.id);
    // The busy ending would have been retried; the campaign is canceled, so the contact is too.
    expect(read.counters).toMatchObject({ canceled: 1, busy: 0, pending: 0, calls_placed: 1 });
    expect(await campaignCalls(database.db, campaign.id)).toHaveLength(1);
    expect(await finishedEvents(client, campaign.id)).toHaveLength(1);
  });
});
