// POST /calls/{id}/cancel in every state, and max_duration_sec enforcement, over HTTP. The simulator
// runs on a hand-moved clock (one simulated second = 1000 ms of it), so each state is pinned exactly.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { eventsOfCall, ledgerOfCall, testNumber, waitForCall } from './support/calls.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';

const SECOND = 1000;
const HOLD = 2000;
// Seed 507777: connects 4 s after placement, would talk for 53 s, detects its intent after 15 s.
const LONG_TALK = '+919876507777';

let database: TestDatabase;
let app: TestApp;
let clock: ManualClock;

beforeAll(async () => {
  database = await createTestDatabase();
  clock = new ManualClock();
  app = await startTestApp(database, { clock, config: { simulatorStepMs: SECOND } });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

async function placeIn(
  org: TestOrg,
  to: string,
  advanceMs: number,
  status: string,
  body: { max_duration_sec?: number } = {},
) {
  const client = app.client(org.key);
  const { data } = await client.POST('/calls', { body: { agent_id: org.agentId, to_e164: to, ...body } });
  const created = data!.data;
  clock.advance(advanceMs);
  await waitForCall(database.db, client, created.id, status);
  return created;
}

async function cancel(org: TestOrg, id: string) {
  return app.client(org.key).POST('/calls/{id}/cancel', { params: { path: { id } } });
}

describe('cancel before the call connects', () => {
  for (const [status, advanceMs] of [
    ['queued', 0],
    ['dialing', 1.5 * SECOND],
    ['ringing', 2.5 * SECOND],
  ] as const) {
    it(`a ${status} call becomes canceled, costs nothing and emits call.canceled`, async () => {
      const org = await createTestOrg(database.db, { credits: 10_000 });
      const created = await placeIn(org, testNumber('7777'), advanceMs, status);
      const { data, response } = await cancel(org, created.id);
      expect(response.status).toBe(200);
      expect(data!.data).toMatchObject({
        id: created.id,
        status: 'canceled',
        reason: 'canceled_by_client',
        duration_sec: null,
        credits_debited_paise: 0,
        started_at: null,
        ended_at: clock.now().toISOString(),
      });
      const events = await eventsOfCall(database.db, created.id);
      expect(events.map(({ kind, data }) => ({ kind, data }))).toEqual([
        {
          kind: 'call.canceled',
          data: {
            call_id: created.id,
            provider_call_id: created.provider_call_id,
            status: 'canceled',
            reason: 'canceled_by_client',
          },
        },
      ]);
      expect(await ledgerOfCall(database.db, created.id)).toEqual([
        { kind: 'hold', amount_paise: -HOLD },
        { kind: 'release', amount_paise: HOLD },
      ]);
      // It stays canceled: once a sentinel call placed now has ended, the worker has run past every
      // later scripted event of the canceled call, and none was applied.
      const sentinel = await app
        .client(org.key)
        .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('0001') } });
      clock.advance(100 * SECOND);
      await waitForCall(database.db, app.client(org.key), sentinel.data!.data.id, 'busy');
      const after = await waitForCall(database.db, app.client(org.key), created.id);
      expect(after.status).toBe('canceled');
      expect(after.timeline.at(-1)).toEqual({
        at: data!.data.ended_at,
        kind: 'status-changed',
        detail: { status: 'canceled', reason: 'canceled_by_client' },
      });
      expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 10_000, ledgerSum: 10_000 });
      const again = await cancel(org, created.id);
      expect(again.response.status).toBe(409);
      expect(again.error!.error.code).toBe('invalid_state');
    });
  }
});

describe('cancel while connected', () => {
  it('hangs up an in_progress call: completed, charged for the connected seconds, call.completed', async () => {
    const org = await createTestOrg(database.db, { credits: 10_000 });
    const created = await placeIn(org, LONG_TALK, 4.5 * SECOND, 'in_progress');
    clock.advance(25 * SECOND); // 25.5 s connected: billed as 25
    const { data, response } = await cancel(org, created.id);
    expect(response.status).toBe(200);
    const charge = Math.ceil((25 * 200) / 60);
    expect(data!.data).toMatchObject({
      status: 'completed',
      reason: null,
      duration_sec: 25,
      credits_debited_paise: charge,
      llm_extracted_intent: 'request_callback',
      llm_outcome: 'ended_early',
      ended_at: clock.now().toISOString(),
    });
    const detail = await waitForCall(database.db, app.client(org.key), created.id);
    expect(detail.transcript!.map((turn) => turn.role)).toEqual(['agent', 'contact']);
    const events = await eventsOfCall(database.db, created.id);
    expect(events.map(({ kind, data }) => ({ kind, data }))).toEqual([
      {
        kind: 'call.completed',
        data: {
          call_id: created.id,
          provider_call_id: created.provider_call_id,
          status: 'completed',
          duration_sec: 25,
          recording_url: detail.recording_url,
        },
      },
    ]);
    expect(await ledgerOfCall(database.db, created.id)).toEqual([
      { kind: 'hold', amount_paise: -HOLD },
      { kind: 'release', amount_paise: HOLD },
      { kind: 'charge', amount_paise: -charge },
    ]);
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({
      balance: 10_000 - charge,
      ledgerSum: 10_000 - charge,
    });
  });
});

describe('cancel after the call ended', () => {
  it('refuses with invalid_state, even when the worker has not caught up yet', async () => {
    const org = await createTestOrg(database.db);
    const { data } = await app
      .client(org.key)
      .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('0001') } });
    clock.advance(10 * SECOND); // busy after 3 s; cancel at once, racing the worker
    const { error, response } = await cancel(org, data!.data.id);
    expect(response.status).toBe(409);
    expect(error!.error).toMatchObject({ code: 'invalid_state' });
    expect(error!.error.message).toContain('busy');
    const call = await waitForCall(database.db, app.client(org.key), data!.data.id);
    expect(call.status).toBe('busy');
    expect((await eventsOfCall(database.db, call.id)).map((event) => event.kind)).toEqual(['call.busy']);
  });
});

describe('max_duration_sec', () => {
  it("an agent's limit hangs the call up at exactly that many connected seconds", async () => {
    const org = await createTestOrg(database.db, { credits: 10_000, agent: { maxDurationSec: 15 } });
    const created = await placeIn(org, LONG_TALK, 5 * SECOND, 'in_progress');
    clock.advance(200 * SECOND);
    const call = await waitForCall(database.db, app.client(org.key), created.id);
    const charge = Math.ceil((15 * 200) / 60);
    expect(call).toMatchObject({
      status: 'completed',
      duration_sec: 15,
      credits_debited_paise: charge,
      llm_outcome: 'ended_early',
    });
    expect(Date.parse(call.ended_at!) - Date.parse(call.started_at!)).toBe(15 * SECOND);
    expect(call.transcript!.every((turn) => turn.end_ms <= 15_000)).toBe(true);
    expect(await ledgerOfCall(database.db, created.id)).toEqual([
      { kind: 'hold', amount_paise: -200 },
      { kind: 'release', amount_paise: 200 },
      { kind: 'charge', amount_paise: -charge },
    ]);
    const events = await eventsOfCall(database.db, created.id);
    expect(events.map((event) => event.data)).toEqual([
      {
        call_id: created.id,
        provider_call_id: created.provider_call_id,
        status: 'completed',
        duration_sec: 15,
        recording_url: call.recording_url,
      },
    ]);
  });

  it('a per-call limit applies even when the worker finds the call long overdue', async () => {
    const org = await createTestOrg(database.db, { credits: 10_000 });
    const client = app.client(org.key);
    const { data } = await client.POST('/calls', {
      body: { agent_id: org.agentId, to_e164: LONG_TALK, max_duration_sec: 20 },
    });
    clock.advance(300 * SECOND); // every scripted event is due at once
    const call = await waitForCall(database.db, client, data!.data.id);
    expect(call).toMatchObject({
      status: 'completed',
      duration_sec: 20,
      credits_debited_paise: Math.ceil((20 * 200) / 60),
    });
    const ended = Date.parse(data!.data.created_at) + (4 + 20) * SECOND;
    expect(call.ended_at).toBe(new Date(ended).toISOString());
  });

  it('is enforced in real time too', async () => {
    // A database of its own: every process sharing a database must run the same simulator timing, and
    // this file's app (1-second steps on a hand-moved clock) would otherwise claim the call as well and
    // hang it up by its own clock and step.
    const own = await createTestDatabase();
    const fast = await startTestApp(own, { config: { simulatorStepMs: 5 } });
    try {
      const org = await createTestOrg(own.db, { credits: 10_000 });
      const client = fast.client(org.key);
      const { data } = await client.POST('/calls', {
        body: { agent_id: org.agentId, to_e164: LONG_TALK, max_duration_sec: 15 },
      });
      const call = await waitForCall(own.db, client, data!.data.id);
      expect(call).toMatchObject({ status: 'completed', duration_sec: 15 });
    } finally {
      await fast.close();
      await own.drop();
    }
  });
});

describe('trace context', () => {
  it("a cancel's event carries the request's traceparent; the worker's events carry none", async () => {
    const org = await createTestOrg(database.db, { credits: 10_000 });
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const canceled = await placeIn(org, testNumber('7777'), 0, 'queued');
    const response = await rawRequest(app, 'POST', `/calls/${canceled.id}/cancel`, {
      headers: { Authorization: `Bearer ${org.key}`, traceparent },
    });
    expect(response.status).toBe(200);
    // Seed 507777 talks for 53 s: the worker, not a request, ends this one.
    const worked = await placeIn(org, LONG_TALK, 70 * SECOND, 'completed');
    const traces = await database.db
      .selectFrom('events')
      .select(['kind', 'traceparent'])
      .where(sql<string>`data->>'call_id'`, 'in', [canceled.id, worked.id])
      .orderBy('created_at')
      .execute();
    expect(traces).toEqual([
      { kind: 'call.canceled', traceparent },
      { kind: 'call.completed', traceparent: null },
    ]);
  });
});
