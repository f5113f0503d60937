// Each simulator test number walked through its whole lifecycle over HTTP: the call, its timeline,
// its event (exact payload), its ledger rows and the org's balance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp } from './support/app.js';
import { eventsOfCall, fetchCall, ledgerOfCall, testNumber, waitForCall } from './support/calls.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';

const RATE = 200; // paise per minute (the test agent's default)
const HOLD = 10 * RATE; // max_duration_sec 600 by default: 10 minutes

let database: TestDatabase;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

function statusesOf(timeline: { kind: string; detail: Record<string, unknown> }[]) {
  return timeline.filter((entry) => entry.kind === 'status-changed').map((entry) => entry.detail.status);
}

async function placeAndFinish(last4: string) {
  const org = await createTestOrg(database.db, { credits: 100_000 });
  const client = app.client(org.key);
  const to = testNumber(last4);
  const { data, error, response } = await client.POST('/calls', { body: { agent_id: org.agentId, to_e164: to } });
  expect(error).toBeUndefined();
  expect(response.status).toBe(201);
  const created = data!.data;
  expect(created).toMatchObject({ status: 'queued', agent_id: org.agentId, to_e164: to, provider: 'simulator' });
  expect(created.provider_call_id).toMatch(/^sim_[0-9a-f]{16}$/);
  const call = await waitForCall(database.db, client, created.id);
  const events = await eventsOfCall(database.db, created.id);
  const ledger = await ledgerOfCall(database.db, created.id);
  const money = await balanceAndLedgerSum(database.db, org.orgId);
  return { org, created, call, events, ledger, money };
}

describe('simulated call lifecycles', () => {
  it('0001 ends busy from dialing, emits call.busy and costs nothing', async () => {
    const { org, created, call, events, ledger, money } = await placeAndFinish('0001');
    expect(call).toMatchObject({
      status: 'busy',
      reason: 'busy',
      duration_sec: null,
      credits_debited_paise: 0,
      started_at: null,
    });
    expect(call.ended_at).not.toBeNull();
    expect(call.transcript).toBeUndefined();
    expect(statusesOf(call.timeline)).toEqual(['queued', 'dialing', 'busy']);
    expect(events).toEqual([
      {
        id: expect.stringMatching(/^evt_[0-9a-z]{24}$/) as unknown,
        kind: 'call.busy',
        org_id: org.orgId,
        data: { call_id: created.id, provider_call_id: created.provider_call_id, status: 'busy', reason: 'busy' },
      },
    ]);
    expect(ledger).toEqual([
      { kind: 'hold', amount_paise: -HOLD },
      { kind: 'release', amount_paise: HOLD },
    ]);
    expect(money).toEqual({ balance: 100_000, ledgerSum: 100_000 });
  });

  it('0002 rings out to no_answer, emits call.no_answer and costs nothing', async () => {
    const { created, call, events, ledger, money } = await placeAndFinish('0002');
    expect(call).toMatchObject({
      status: 'no_answer',
      reason: 'no_answer',
      duration_sec: null,
      credits_debited_paise: 0,
    });
    expect(statusesOf(call.timeline)).toEqual(['queued', 'dialing', 'ringing', 'no_answer']);
    expect(events.map(({ kind, data }) => ({ kind, data }))).toEqual([
      {
        kind: 'call.no_answer',
        data: {
          call_id: created.id,
          provider_call_id: created.provider_call_id,
          status: 'no_answer',
          reason: 'no_answer',
        },
      },
    ]);
    expect(ledger).toEqual([
      { kind: 'hold', amount_paise: -HOLD },
      { kind: 'release', amount_paise: HOLD },
    ]);
    expect(money).toEqual({ balance: 100_000, ledgerSum: 100_000 });
  });

  it('0003 fails before connecting (carrier_rejected), emits call.failed and costs nothing', async () => {
    const { created, call, events, ledger, money } = await placeAndFinish('0003');
    expect(call).toMatchObject({
      status: 'failed',
      reason: 'carrier_rejected',
      duration_sec: null,
      credits_debited_paise: 0,
      started_at: null,
      recording_url: null,
    });
    expect(statusesOf(call.timeline)).toEqual(['queued', 'dialing', 'failed']);
    expect(call.timeline.at(-1)!.detail).toEqual({ status: 'failed', reason: 'carrier_rejected' });
    expect(events.map(({ kind, data }) => ({ kind, data }))).toEqual([
      {
        kind: 'call.failed',
        data: {
          call_id: created.id,
          provider_call_id: created.provider_call_id,
          status: 'failed',
          reason: 'carrier_rejected',
        },
      },
    ]);
    expect(ledger).toEqual([
      { kind: 'hold', amount_paise: -HOLD },
      { kind: 'release', amount_paise: HOLD },
    ]);
    expect(money).toEqual({ balance: 100_000, ledgerSum: 100_000 });
  });

  it('0004 fails mid-call (provider_error) and is charged for the connected seconds', async () => {
    const { created, call, events, ledger, money } = await placeAndFinish('0004');
    const charge = Math.ceil((8 * RATE) / 60);
    expect(call).toMatchObject({
      status: 'failed',
      reason: 'provider_error',
      duration_sec: 8,
      credits_debited_paise: charge,
    });
    expect(call.started_at).not.toBeNull();
    expect(call.transcript).toBeUndefined();
    expect(statusesOf(call.timeline)).toEqual(['queued', 'dialing', 'ringing', 'in_progress', 'failed']);
    expect(call.timeline.map((entry) => entry.kind)).toContain('disclosure-played');
    expect(events.map(({ kind, data }) => ({ kind, data }))).toEqual([
      {
        kind: 'call.failed',
        data: {
          call_id: created.id,
          provider_call_id: created.provider_call_id,
          status: 'failed',
          reason: 'provider_error',
        },
      },
    ]);
    expect(ledger).toEqual([
      { kind: 'hold', amount_paise: -HOLD },
      { kind: 'release', amount_paise: HOLD },
      { kind: 'charge', amount_paise: -charge },
    ]);
    expect(money).toEqual({ balance: 100_000 - charge, ledgerSum: 100_000 - charge });
  });

  it('any other number completes with transcript, timeline, recording and language-model fields', async () => {
    const { created, call, events, ledger, money } = await placeAndFinish('7777');
    expect(call.status).toBe('completed');
    expect(call.reason).toBeNull();
    expect(call.duration_sec).toBeGreaterThanOrEqual(20);
    expect(call.duration_sec).toBeLessThanOrEqual(60);
    const charge = Math.ceil((call.duration_sec! * RATE) / 60);
    expect(call.credits_debited_paise).toBe(charge);
    expect(call.recording_url).toMatch(/^https:\/\//);
    expect(call.llm_extracted_intent).toEqual(expect.any(String));
    expect(['positive', 'neutral', 'negative']).toContain(call.llm_sentiment);
    expect(call.llm_outcome).toEqual(expect.any(String));
    expect(Date.parse(call.ended_at!)).toBeGreaterThan(Date.parse(call.started_at!));
    expect(call.transcript!.length).toBeGreaterThanOrEqual(3);
    for (const turn of call.transcript!) {
      expect(['agent', 'contact']).toContain(turn.role);
      expect(turn.end_ms).toBeGreaterThan(turn.start_ms);
      expect(turn.end_ms).toBeLessThanOrEqual(call.duration_sec! * 1000);
    }
    expect(statusesOf(call.timeline)).toEqual(['queued', 'dialing', 'ringing', 'in_progress', 'completed']);
    const kinds = call.timeline.map((entry) => entry.kind);
    expect(kinds).toContain('disclosure-played');
    expect(call.timeline.find((entry) => entry.kind === 'intent-detected')!.detail).toEqual({
      intent: call.llm_extracted_intent,
    });
    const times = call.timeline.map((entry) => Date.parse(entry.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    expect(events.map(({ kind, data }) => ({ kind, data }))).toEqual([
      {
        kind: 'call.completed',
        data: {
          call_id: created.id,
          provider_call_id: created.provider_call_id,
          status: 'completed',
          duration_sec: call.duration_sec,
          recording_url: call.recording_url,
        },
      },
    ]);
    expect(ledger).toEqual([
      { kind: 'hold', amount_paise: -HOLD },
      { kind: 'release', amount_paise: HOLD },
      { kind: 'charge', amount_paise: -charge },
    ]);
    expect(money).toEqual({ balance: 100_000 - charge, ledgerSum: 100_000 - charge });
  });

  it('a contact asking for a person produces a handoff-requested timeline entry', async () => {
    // The last six digits pick the scenario: 2 mod 4 is the hand-off conversation.
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const { data } = await client.POST('/calls', { body: { agent_id: org.agentId, to_e164: '+919876500006' } });
    const call = await waitForCall(database.db, client, data!.data.id);
    expect(call.status).toBe('completed');
    expect(call.llm_outcome).toBe('handed_off');
    expect(call.timeline.find((entry) => entry.kind === 'handoff-requested')!.detail).toEqual({
      reason: 'contact_asked_for_a_person',
    });
  });

  it('0005 is refused by the provider: 502 upstream_error and nothing is written', async () => {
    const org = await createTestOrg(database.db, { credits: 50_000 });
    const client = app.client(org.key);
    const { error, response } = await client.POST('/calls', {
      body: { agent_id: org.agentId, to_e164: testNumber('0005') },
      headers: { 'Idempotency-Key': 'refused-once' },
    });
    expect(response.status).toBe(502);
    expect(error!.error.code).toBe('upstream_error');
    const calls = await database.db.selectFrom('calls').select('id').where('org_id', '=', org.orgId).execute();
    expect(calls).toEqual([]);
    const keys = await database.db
      .selectFrom('call_idempotency_keys')
      .select('key')
      .where('org_id', '=', org.orgId)
      .execute();
    expect(keys).toEqual([]);
    const ledger = await database.db
      .selectFrom('credit_ledger')
      .select('kind')
      .where('org_id', '=', org.orgId)
      .execute();
    expect(ledger).toEqual([{ kind: 'top_up' }]);
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 50_000, ledgerSum: 50_000 });
    const list = await client.GET('/calls', {});
    expect(list.data!.pagination.total).toBe(0);
  });

  it('uses the defaults from the agent and the org, and keeps metadata', async () => {
    const org = await createTestOrg(database.db, {
      agent: { language: 'hi-IN', maxDurationSec: 120, fromE164: '+918045678901', ratePaisePerMinute: 300 },
    });
    const client = app.client(org.key);
    const { data } = await client.POST('/calls', {
      body: {
        agent_id: org.agentId,
        to_e164: testNumber('0001'),
        metadata: { crm_lead_id: 'LEAD-1', priority: 2, vip: true },
      },
    });
    // 0001 ends busy within a few simulated seconds; waiting for that makes the ledger exact whatever
    // the machine's speed: the hold (2 minutes at 300 paise, from the agent's defaults), then its release.
    const call = await waitForCall(database.db, client, data!.data.id, 'busy');
    expect(call).toMatchObject({
      from_e164: '+918045678901',
      language: 'hi-IN',
      direction: 'outbound',
      metadata: { crm_lead_id: 'LEAD-1', priority: 2, vip: true },
    });
    expect(await ledgerOfCall(database.db, call.id)).toEqual([
      { kind: 'hold', amount_paise: -600 },
      { kind: 'release', amount_paise: 600 },
    ]);
    const explicit = await client.POST('/calls', {
      body: {
        agent_id: org.agentId,
        to_e164: testNumber('0001'),
        from_e164: '+14155550100',
        language: 'en-US',
        max_duration_sec: 61,
      },
    });
    expect(await waitForCall(database.db, client, explicit.data!.data.id, 'busy')).toMatchObject({
      from_e164: '+14155550100',
      language: 'en-US',
    });
    // 61 seconds round up to 2 minutes.
    expect(await ledgerOfCall(database.db, explicit.data!.data.id)).toEqual([
      { kind: 'hold', amount_paise: -600 },
      { kind: 'release', amount_paise: 600 },
    ]);
  });

  it('falls back to the provider default caller id when neither agent nor org has one', async () => {
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const { data } = await client.POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('0001') } });
    expect((await fetchCall(client, data!.data.id)).from_e164).toBe('+918000000000');
  });
});
