// The call-progress worker advances a batch of due calls in one transaction, with each org's balance
// movement and status counters written once for the batch: every call still ends with its own ledger
// rows and event (the events of an org written in one statement, the calls' rows and their reports in
// one each), the counters match the calls, the attempts of the campaign calls it ends are settled with
// them, and a call whose change fails is put off alone while the rest of its batch moves on. A
// simulator call's row moves once a step (looked up under its lock, no lease written first). A network
// provider's calls are left to the reconciliation job, whose most overdue call held by another
// transaction does not stop the next one. A campaign's
// placements, taken by the provider at once, are recorded as calls in groups the same way.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { eventsOfCall, ledgerOfCall, testNumber } from './support/calls.js';
import { advanceDueCalls } from '../src/calls/progress-worker.js';
import { LookupGate } from '../src/calls/lookup-gate.js';
import { reconcileDue } from '../src/calls/reconcile-job.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';
import { runDispatchPass } from '../src/campaigns/dispatch/pass.js';
import { ALWAYS, createCampaign, createContacts } from './support/campaigns.js';
import { testProviderModule, TestProvider } from './support/test-provider.js';
import { planCall } from '../src/calls/provider/simulator/script.js';
import { emitOrgEvents } from '../src/webhooks/outbox.js';

const STEP_MS = 1_000;
// Completed (several lengths), busy, no answer, carrier rejected, failed mid-call.
const ENDINGS = ['7777', '1234', '4321', '8888', '0001', '0002', '0003', '0004', '9999', '5555'];
const TERMINAL = ['completed', 'failed', 'no_answer', 'busy', 'canceled'];

let database: TestDatabase;
let app: TestApp;
let clock: ManualClock;
// A provider whose lookups are rate-limited, beside the simulator (whose are not).
const limited = new TestProvider();

beforeAll(async () => {
  database = await createTestDatabase();
  clock = new ManualClock();
  app = await startTestApp(database, {
    clock,
    workers: false,
    providers: [testProviderModule(limited)],
    config: { simulatorStepMs: STEP_MS },
  });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Places one call to each of ENDINGS for the org; returns their ids. */
async function placeCalls(org: TestOrg): Promise<string[]> {
  const ids: string[] = [];
  for (const ending of ENDINGS) {
    const { data } = await app.client(org.key).POST('/calls', {
      body: { agent_id: org.agentId, to_e164: testNumber(ending) },
    });
    ids.push(data!.data.id);
  }
  return ids;
}

async function statusesOf(ids: string[]) {
  const rows = await database.db.selectFrom('calls').select(['id', 'status']).where('id', 'in', ids).execute();
  return new Map(rows.map((row) => [row.id, row.status]));
}

/** The org's counters beside its calls counted by status: they must agree. */
async function countersAndCalls(orgId: string) {
  const counters = await database.db
    .selectFrom('call_status_counts')
    .select(['status', sql<number>`count::int`.as('n')])
    .where('org_id', '=', orgId)
    .where('count', '>', 0)
    .orderBy('status')
    .execute();
  const calls = await database.db
    .selectFrom('calls')
    .select(['status', sql<number>`count(*)::int`.as('n')])
    .where('org_id', '=', orgId)
    .groupBy('status')
    .orderBy('status')
    .execute();
  return { counters, calls };
}

/** Checks what each ended call leaves: its ledger rows, one ending event, and the org's sums. */
async function expectSettled(org: TestOrg, ids: string[]) {
  const { counters, calls } = await countersAndCalls(org.orgId);
  expect(counters).toEqual(calls);
  const { balance, ledgerSum } = await balanceAndLedgerSum(database.db, org.orgId);
  expect(balance).toBe(ledgerSum);
  for (const id of ids) {
    const kinds = (await ledgerOfCall(database.db, id)).map((row) => row.kind);
    expect(kinds.slice(0, 2)).toEqual(['hold', 'release']);
    expect(await eventsOfCall(database.db, id)).toHaveLength(1);
    // The timeline, written for the whole batch at once, still tells the call's statuses in order.
    const { data } = await app.client(org.key).GET('/calls/{id}', { params: { path: { id } } });
    const statuses = data!.data.timeline.flatMap((entry) =>
      entry.kind === 'status-changed' ? [entry.detail.status] : [],
    );
    expect(statuses[0]).toBe('queued');
    expect(statuses.at(-1)).toBe(data!.data.status);
    const chain = ['queued', 'dialing', 'ringing', 'in_progress'];
    const before = statuses.slice(0, -1);
    expect(before).toEqual(chain.slice(0, before.length));
  }
}

describe('the progress worker batches due calls', () => {
  it('ends the due calls of two orgs in one step, each settled, with counters that match', async () => {
    const first = await createTestOrg(database.db, { planId: 'scale' });
    const second = await createTestOrg(database.db, { planId: 'scale' });
    // The first org's endpoint takes every ending kind: each event the batch emits queues a delivery.
    const { id: endpointId } = await database.db
      .insertInto('webhooks')
      .values({
        org_id: first.orgId,
        url: 'https://hooks.example.com/calls',
        events: ['call.completed', 'call.failed', 'call.no_answer', 'call.busy', 'call.canceled'],
        secret: 'whsec_progress_batches',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const ids = [...(await placeCalls(first)), ...(await placeCalls(second))];
    // Past every scripted ending (the longest call lasts 66 simulated seconds), within max_duration_sec.
    clock.advance(90 * STEP_MS);

    // All 20 in one batch, which reports how many it advanced.
    expect(await advanceDueCalls(app.deps)).toBe(ids.length);

    const statuses = await statusesOf(ids);
    expect([...statuses.values()].filter((status) => !TERMINAL.includes(status))).toEqual([]);
    await expectSettled(first, ids.slice(0, ENDINGS.length));
    await expectSettled(second, ids.slice(ENDINGS.length));
    const delivered = await database.db
      .selectFrom('webhook_deliveries')
      .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
      .select(sql<string>`events.data->>'call_id'`.as('call_id'))
      .where('webhook_deliveries.webhook_id', '=', endpointId)
      .execute();
    expect(delivered.map((row) => row.call_id).sort()).toEqual(ids.slice(0, ENDINGS.length).sort());
  });

  it("writes a batch's calls and reports in one statement each, its events in one per org and their deliveries in one more", async () => {
    const orgs = [
      await createTestOrg(database.db, { planId: 'scale' }),
      await createTestOrg(database.db, { planId: 'scale' }),
    ];
    for (const org of orgs) {
      await database.db
        .insertInto('webhooks')
        .values({
          org_id: org.orgId,
          url: 'https://hooks.example.com/calls',
          events: ['call.completed', 'call.failed', 'call.no_answer', 'call.busy'],
          secret: 'whsec_progress_event_statements',
        })
        .execute();
    }
    const ids = [...(await placeCalls(orgs[0]!)), ...(await placeCalls(orgs[1]!))];
    clock.advance(90 * STEP_MS);
    await sql
      .raw(
        `CREATE TABLE write_statements (target text);
         CREATE FUNCTION note_write_statement() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN INSERT INTO write_statements VALUES (TG_OP || ' ' || TG_TABLE_NAME); RETURN NULL; END $$;
         CREATE TRIGGER note_call_update AFTER UPDATE ON calls
           FOR EACH STATEMENT EXECUTE FUNCTION note_write_statement();
         CREATE TRIGGER note_event_insert AFTER INSERT ON events
           FOR EACH STATEMENT EXECUTE FUNCTION note_write_statement();
         CREATE TRIGGER note_delivery_insert AFTER INSERT ON webhook_deliveries
           FOR EACH STATEMENT EXECUTE FUNCTION note_write_statement();
         CREATE TRIGGER note_report_insert AFTER INSERT ON provider_events
           FOR EACH STATEMENT EXECUTE FUNCTION note_write_statement();`,
      )
      .execute(database.db);
    try {
      expect(await advanceDueCalls(app.deps)).toBeGreaterThan(0);
      const { rows } = await sql<{ target: string; n: number }>`
        SELECT target, count(*)::int AS n FROM write_statements GROUP BY target ORDER BY target`.execute(database.db);
      // The simulator's reports of all the batch's calls are stored in one statement too, and the
      // calls' rows are written in one.
      expect(rows).toEqual([
        { target: 'INSERT events', n: 2 },
        { target: 'INSERT provider_events', n: 1 },
        { target: 'INSERT webhook_deliveries', n: 2 },
        { target: 'UPDATE calls', n: 1 },
      ]);
      const { rows: reports } = await sql<{ calls: number; unapplied: number }>`
        SELECT count(DISTINCT call_id)::int AS calls, count(*) FILTER (WHERE applied_at IS NULL)::int AS unapplied
        FROM provider_events WHERE call_id = ANY (${ids}::uuid[])`.execute(database.db);
      expect(reports[0]).toEqual({ calls: ids.length, unapplied: 0 });
    } finally {
      await sql
        .raw(
          `DROP TRIGGER note_event_insert ON events; DROP TRIGGER note_delivery_insert ON webhook_deliveries;
           DROP TRIGGER note_report_insert ON provider_events; DROP TRIGGER note_call_update ON calls;
           DROP FUNCTION note_write_statement(); DROP TABLE write_statements;`,
        )
        .execute(database.db);
    }
    // Each org's endpoint has one delivery per ended call.
    for (const org of orgs) {
      const { rows } = await sql<{ deliveries: number; calls: number }>`
        SELECT count(*)::int AS deliveries, count(DISTINCT e.data->>'call_id')::int AS calls
        FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
        WHERE d.org_id = ${org.orgId}::uuid`.execute(database.db);
      expect(rows[0]).toEqual({ deliveries: ENDINGS.length, calls: ENDINGS.length });
    }
    await expectSettled(orgs[0]!, ids.slice(0, ENDINGS.length));
    // Events of several kinds recorded together are queued to the endpoint in the order given.
    const [first, second, third] = ids;
    const made = await database.db.transaction().execute((trx) =>
      emitOrgEvents(trx, orgs[0]!.orgId, [
        {
          kind: 'call.busy',
          data: { call_id: first!, provider_call_id: 'sim_order', status: 'busy', reason: 'busy' },
          traceparent: null,
        },
        {
          kind: 'call.failed',
          data: { call_id: second!, provider_call_id: 'sim_order', status: 'failed', reason: null },
          traceparent: null,
        },
        {
          kind: 'call.busy',
          data: { call_id: third!, provider_call_id: 'sim_order', status: 'busy', reason: null },
          traceparent: null,
        },
      ]),
    );
    const queued = await database.db
      .selectFrom('webhook_deliveries')
      .select('event_id')
      .where('event_id', 'in', made)
      .orderBy('seq')
      .execute();
    expect(queued.map((row) => row.event_id)).toEqual(made);
  });

  it('puts off only the call whose change fails, and ends it once it can', async () => {
    const org = await createTestOrg(database.db, { planId: 'scale' });
    const ids = await placeCalls(org);
    const [stuck] = ids;
    // A fault in one call's row: its update to any ending fails, the others' do not.
    await sql
      .raw(
        `CREATE FUNCTION refuse_one_ending() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF NEW.id = '${stuck}' AND NEW.ended_at IS NOT NULL THEN RAISE EXCEPTION 'refused in the test'; END IF;
           RETURN NEW;
         END $$;
         CREATE TRIGGER refuse_one_ending BEFORE UPDATE ON calls FOR EACH ROW EXECUTE FUNCTION refuse_one_ending();`,
      )
      .execute(database.db);
    clock.advance(90 * STEP_MS);

    try {
      expect(await advanceDueCalls(app.deps)).toBeGreaterThan(0);
      const statuses = await statusesOf(ids);
      expect(TERMINAL).not.toContain(statuses.get(stuck!));
      expect(ids.slice(1).filter((id) => !TERMINAL.includes(statuses.get(id)!))).toEqual([]);
      const { counters, calls } = await countersAndCalls(org.orgId);
      expect(counters).toEqual(calls);
      // Put off, not lost: it is due again a little later.
      const { next_step_at: nextStepAt } = await database.db
        .selectFrom('calls')
        .select('next_step_at')
        .where('id', '=', stuck!)
        .executeTakeFirstOrThrow();
      expect(nextStepAt!.getTime()).toBeGreaterThan(clock.now().getTime());
    } finally {
      await sql.raw('DROP TRIGGER refuse_one_ending ON calls; DROP FUNCTION refuse_one_ending();').execute(database.db);
    }

    clock.advance(10 * STEP_MS);
    expect(await advanceDueCalls(app.deps)).toBeGreaterThan(0);
    expect(TERMINAL).toContain((await statusesOf([stuck!])).get(stuck!));
    await expectSettled(org, ids);
  });
});

describe("the calls of a network provider are the reconciliation job's", () => {
  it("advances a rate-limited provider's overdue call while simulator calls are due, which the progress worker leaves", async () => {
    const org = await createTestOrg(database.db, { planId: 'scale' });
    await placeCalls(org);
    const live = await createTestOrg(database.db, { agent: { provider: limited.name } });
    const { data } = await app.client(live.key).POST('/calls', {
      body: { agent_id: live.agentId, to_e164: testNumber('7777') },
    });
    // Unknown to its provider when looked up: it ends (failed), leaving nothing due for later tests.
    const overdue = data!.data.id;
    clock.advance(90 * STEP_MS);
    // Due long before any simulator call: the oldest work there is.
    await database.db
      .updateTable('calls')
      .set({ next_step_at: new Date(clock.now().getTime() - 3_600_000) })
      .where('id', '=', overdue)
      .execute();
    limited.lookups = [];

    // A busy simulator (a test-mode campaign) has calls due at every step: the progress worker takes those only.
    expect(await advanceDueCalls(app.deps)).toBeGreaterThan(0);
    expect(limited.lookups).toEqual([]);
    expect(await reconcileDue(app.deps, new LookupGate(app.deps.metrics))).toBe(true);
    expect(limited.lookups.map((ref) => ref.callId)).toEqual([overdue]);
  });

  it('takes the next overdue call of a network provider when another process holds the most overdue one', async () => {
    const live = await createTestOrg(database.db, { agent: { provider: limited.name } });
    const ids: string[] = [];
    for (const ending of ['7777', '1234']) {
      const { data } = await app.client(live.key).POST('/calls', {
        body: { agent_id: live.agentId, to_e164: testNumber(ending) },
      });
      ids.push(data!.data.id);
    }
    const [held, next] = ids as [string, string];
    const hourAgo = clock.now().getTime() - 3_600_000;
    for (const [index, id] of ids.entries()) {
      await database.db
        .updateTable('calls')
        .set({ next_step_at: new Date(hourAgo + index * 1_000) })
        .where('id', '=', id)
        .execute();
    }
    limited.lookups = [];
    const gate = new LookupGate(app.deps.metrics);
    // Another process is in the middle of a change of the most overdue call (a cancel, say).
    await database.db.transaction().execute(async (trx) => {
      await trx.selectFrom('calls').select('id').where('id', '=', held).forUpdate().execute();
      expect(await reconcileDue(app.deps, gate)).toBe(true);
    });
    expect(limited.lookups.map((ref) => ref.callId)).toEqual([next]);
    // Once free, the held call is taken too.
    expect(await reconcileDue(app.deps, gate)).toBe(true);
    expect(limited.lookups.map((ref) => ref.callId)).toEqual([next, held]);
  });
});

describe('the progress worker applies several due statuses at once', () => {
  it('gives each status its own time in the timeline, and started_at the connection time', async () => {
    const org = await createTestOrg(database.db);
    const to = testNumber('7777');
    const { data } = await app.client(org.key).POST('/calls', { body: { agent_id: org.agentId, to_e164: to } });
    const placed = data!.data;
    const script = planCall(to, '').steps;
    const connectedSec = script.find(
      ({ event }) => event.type === 'status' && event.status === 'in_progress',
    )!.offsetSec;
    // Past the connection and the disclosure, short of anything later: one lookup sees dialing, ringing
    // and in_progress due together.
    clock.advance((connectedSec + 1) * STEP_MS + STEP_MS / 2);
    while ((await advanceDueCalls(app.deps)) > 0);

    const { data: read } = await app.client(org.key).GET('/calls/{id}', { params: { path: { id: placed.id } } });
    const call = read!.data;
    const placedAt = Date.parse(placed.created_at);
    const at = (offsetSec: number) => new Date(placedAt + offsetSec * STEP_MS).toISOString();
    expect(call.status).toBe('in_progress');
    expect(call.started_at).toBe(at(connectedSec));
    const expected = script.flatMap(({ offsetSec, event }) =>
      offsetSec <= connectedSec + 1 && event.type === 'status' ? [{ status: event.status, at: at(offsetSec) }] : [],
    );
    const statuses = call.timeline.flatMap((entry) =>
      entry.kind === 'status-changed' ? [{ status: entry.detail.status, at: entry.at }] : [],
    );
    expect(statuses).toEqual([{ status: 'queued', at: placed.created_at }, ...expected]);
    expect(expected.map(({ status }) => status)).toEqual(['dialing', 'ringing', 'in_progress']);
    // Next looked at when the script's next report is due (set with the statuses, in one update).
    const nextSec = script.find(({ offsetSec }) => offsetSec > connectedSec + 1)!.offsetSec;
    const row = await database.db
      .selectFrom('calls')
      .select('next_step_at')
      .where('id', '=', placed.id)
      .executeTakeFirstOrThrow();
    expect(row.next_step_at?.toISOString()).toBe(at(nextSec));
  });
});

describe('the progress worker steps simulator calls under their row lock', () => {
  it("moves each call's row once a step, with no lease written first", async () => {
    const org = await createTestOrg(database.db, { planId: 'scale' });
    const ids = await placeCalls(org);
    await sql
      .raw(
        `CREATE TABLE call_updates (call_id uuid);
         CREATE FUNCTION note_call_update() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN INSERT INTO call_updates VALUES (NEW.id); RETURN NULL; END $$;
         CREATE TRIGGER note_call_update AFTER UPDATE ON calls FOR EACH ROW EXECUTE FUNCTION note_call_update();`,
      )
      .execute(database.db);
    try {
      // Past each script's first step: every call is due once.
      clock.advance(STEP_MS * 1.5);
      while ((await advanceDueCalls(app.deps)) > 0);
      const { rows } = await sql<{ call_id: string; updates: number }>`
        SELECT call_id, count(*)::int AS updates FROM call_updates
        WHERE call_id = ANY(${ids}::uuid[]) GROUP BY call_id`.execute(database.db);
      expect(rows).toHaveLength(ids.length);
      expect(rows.filter((row) => row.updates !== 1)).toEqual([]);
    } finally {
      await sql
        .raw('DROP TRIGGER note_call_update ON calls; DROP FUNCTION note_call_update(); DROP TABLE call_updates;')
        .execute(database.db);
    }
    const calls = await database.db
      .selectFrom('calls')
      .select(['status', 'next_step_at'])
      .where('id', 'in', ids)
      .execute();
    expect(calls.map((call) => call.status)).not.toContain('queued');
    const now = clock.now().getTime();
    expect(calls.filter((call) => call.next_step_at !== null && call.next_step_at.getTime() <= now)).toEqual([]);
  });
});

/** A new org's campaign, running now, with a contact for each of ENDINGS (`numbers`, in that order). */
async function campaignOfEndings() {
  const org = await createTestOrg(database.db, { planId: 'scale' });
  const client = app.client(org.key);
  const numbers = ENDINGS.map((ending) => testNumber(ending));
  const contacts = await createContacts(client, numbers);
  const campaign = await createCampaign(client, {
    agent_id: org.agentId,
    contacts: { contact_ids: contacts },
    max_concurrency: 100,
    schedule: { starts_at: clock.now().toISOString(), timezone: 'UTC', windows: ALWAYS },
  });
  return { org, campaign, numbers };
}

describe('the progress worker settles the attempts of the campaign calls it ends', () => {
  it("gives each contact its call's ending in the batch that ends the call, before any pass", async () => {
    const { campaign } = await campaignOfEndings();
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(ENDINGS.length);
    clock.advance(90 * STEP_MS);
    while ((await advanceDueCalls(app.deps)) > 0);

    const rows = await database.db
      .selectFrom('campaign_contacts as cc')
      .innerJoin('calls as c', 'c.id', 'cc.last_call_id')
      .select(['cc.state', 'cc.last_outcome', 'cc.next_attempt_at', 'c.status'])
      .where('cc.campaign_id', '=', campaign.id)
      .execute();
    expect(rows).toHaveLength(ENDINGS.length);
    for (const row of rows) {
      expect(row.last_outcome).toBe(row.status);
      // Ended for good, or due again for a retry of a busy line or no answer (the default policy).
      if (row.state === 'pending') {
        expect(['busy', 'no_answer']).toContain(row.status);
        expect(row.next_attempt_at).not.toBeNull();
      } else {
        expect(row.state).toBe(row.status);
      }
    }
  });
});

describe('a campaign pass records its placements in groups', () => {
  it('records the calls its lanes placed at once in fewer transactions than calls, all counted', async () => {
    const { org, campaign } = await campaignOfEndings();
    // Which transaction inserted each call: a group commit shows as calls sharing one.
    await sql
      .raw(
        `CREATE TABLE call_insert_xacts (call_id uuid, xact bigint);
         CREATE FUNCTION note_call_insert() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN INSERT INTO call_insert_xacts VALUES (NEW.id, txid_current()); RETURN NULL; END $$;
         CREATE TRIGGER note_call_insert AFTER INSERT ON calls FOR EACH ROW EXECUTE FUNCTION note_call_insert();`,
      )
      .execute(database.db);
    try {
      expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(ENDINGS.length);
      const { rows } = await sql<{ calls: number; xacts: number }>`
        SELECT count(*)::int AS calls, count(DISTINCT xact)::int AS xacts FROM call_insert_xacts`.execute(database.db);
      expect(rows[0]!.calls).toBe(ENDINGS.length);
      expect(rows[0]!.xacts).toBeLessThan(ENDINGS.length);
    } finally {
      await sql
        .raw('DROP TRIGGER note_call_insert ON calls; DROP FUNCTION note_call_insert(); DROP TABLE call_insert_xacts;')
        .execute(database.db);
    }
    const { counters, calls } = await countersAndCalls(org.orgId);
    expect(counters).toEqual(calls);
    expect(calls).toEqual([{ status: 'queued', n: ENDINGS.length }]);
    const { balance, ledgerSum } = await balanceAndLedgerSum(database.db, org.orgId);
    expect(balance).toBe(ledgerSum);
  });

  it('keeps the calls of a group whose one placement cannot be recorded, and dials that one again later', async () => {
    const { org, campaign, numbers } = await campaignOfEndings();
    const refused = numbers[3]!;
    // A fault in one placement's second transaction: its call's insert fails, the others' do not.
    await sql
      .raw(
        `CREATE FUNCTION refuse_one_call() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           IF NEW.to_e164 = '${refused}' THEN RAISE EXCEPTION 'refused in the test'; END IF;
           RETURN NEW;
         END $$;
         CREATE TRIGGER refuse_one_call BEFORE INSERT ON calls FOR EACH ROW EXECUTE FUNCTION refuse_one_call();`,
      )
      .execute(database.db);
    try {
      await expect(runDispatchPass(app.deps, campaign.id)).rejects.toThrow(/refused in the test/);
    } finally {
      await sql.raw('DROP TRIGGER refuse_one_call ON calls; DROP FUNCTION refuse_one_call();').execute(database.db);
    }
    const placedNow = await database.db
      .selectFrom('calls')
      .select('to_e164')
      .where('campaign_id', '=', campaign.id)
      .execute();
    expect(placedNow.map((row) => row.to_e164).sort()).toEqual(numbers.filter((n) => n !== refused).sort());

    // The placement left between its two transactions is recovered like any other (the simulator
    // does not know it, so it is voided), and the campaign dials that contact again, as the same attempt.
    clock.advance(app.deps.config.providerTimeoutMs + 60_000);
    const gate = new LookupGate(app.deps.metrics);
    while (await reconcileDue(app.deps, gate));
    expect((await runDispatchPass(app.deps, campaign.id)).placed).toBe(1);
    const placedLater = await database.db
      .selectFrom('calls')
      .select(['to_e164', 'campaign_attempt'])
      .where('campaign_id', '=', campaign.id)
      .where('to_e164', '=', refused)
      .execute();
    expect(placedLater).toEqual([{ to_e164: refused, campaign_attempt: 1 }]);
    const { counters, calls } = await countersAndCalls(org.orgId);
    expect(counters).toEqual(calls);
  });
});
