// Calls placed through a Vapi agent over the real HTTP API and PostgreSQL, with a scripted Vapi on
// loopback (test/support/vapi-fake.ts): placement, signed webhooks (each fixture valid by the vendor's
// ServerMessage schema) to completion, duplicates and late reports, refused signatures, unknown calls,
// cancel, the hang-up at max_duration_sec, the provider's failures and reconciliation.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { eventsOfCall, fetchCall, ledgerOfCall, testNumber, waitFor, waitForCall } from './support/calls.js';
import { startVapiFake, type VapiFake } from './support/vapi-fake.js';
import { sql } from 'kysely';
import { lockProviderCallIds } from '../src/calls/provider-event-queries.js';
import { connectDatabase } from '../src/database/connect.js';
import { conversationFixture, endOfCallReport, signedHeaders, statusUpdate, vapiCall } from './support/vapi.js';

const SECRET = 'whsec-vapi-e2e';
const SETTINGS = { assistantId: 'asst-e2e', phoneNumberId: 'pn-e2e' };

let database: TestDatabase;
let fake: VapiFake;
let app: TestApp;

/** The settings of this file's apps: Vapi at the fake, a short provider timeout, reconciliation after 1 s. */
function vapiConfig() {
  return {
    vapiApiKey: 'vapi-e2e-key',
    vapiWebhookSecret: SECRET,
    vapiBaseUrl: fake.url,
    providerTimeoutMs: 2_000,
    providerReconcileAfterS: 1,
  };
}

beforeAll(async () => {
  database = await createTestDatabase();
  fake = await startVapiFake();
  app = await startTestApp(database, { config: vapiConfig() });
});

afterAll(async () => {
  await app?.close();
  await fake?.stop();
  await database?.drop();
});

afterEach(() => {
  expect(fake.violations).toEqual([]);
});

async function vapiOrg(credits = 100_000): Promise<TestOrg> {
  return createTestOrg(database.db, { credits, agent: { provider: 'vapi', providerSettings: SETTINGS } });
}

async function place(org: TestOrg, body: { max_duration_sec?: number } = {}) {
  const { data, error, response } = await app
    .client(org.key)
    .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321'), ...body } });
  if (!data) throw new Error(`POST /calls answered ${response.status}: ${JSON.stringify(error)}`);
  return data.data;
}

/** Posts a server message to the Vapi webhook route, signed at `signedAt` with `secret`. */
async function deliver(body: string, signedAt = new Date(), secret = SECRET): Promise<Response> {
  return fetch(`${app.baseUrl}/providers/vapi/events`, {
    method: 'POST',
    headers: signedHeaders(secret, body, signedAt),
    body,
  });
}

async function storedReports(providerCallId: string): Promise<number> {
  const rows = await database.db
    .selectFrom('provider_events')
    .select('id')
    .where('provider_call_id', '=', providerCallId)
    .execute();
  return rows.length;
}

async function balance(orgId: string): Promise<number> {
  const row = await database.db
    .selectFrom('orgs')
    .select('balance_paise')
    .where('id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.balance_paise);
}

describe('a Vapi call followed through its webhooks', () => {
  it('is placed at Vapi with our call id and ends completed with what the report carries', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    expect(created).toMatchObject({ status: 'queued', provider: 'vapi' });
    const vendor = fake.calls.get(created.provider_call_id);
    expect(vendor?.['assistantOverrides']).toMatchObject({ metadata: { platformCallId: created.id } });
    expect(fake.received.find((request) => request.path === '/call' && request.method === 'POST')).toMatchObject({
      authorization: 'Bearer vapi-e2e-key',
    });

    const call = vapiCall(created.provider_call_id, created.id);
    const startedAt = new Date(Date.now() - 50_000);
    for (const [status, at] of [
      ['queued', new Date(startedAt.getTime() - 6_000)],
      ['ringing', new Date(startedAt.getTime() - 4_000)],
      ['in-progress', startedAt],
    ] as const) {
      expect((await deliver(statusUpdate(call, status, at))).status).toBe(200);
    }
    expect((await fetchCall(app.client(org.key), created.id)).status).toBe('in_progress');

    const report = endOfCallReport(call, 'customer-ended-call', new Date(), conversationFixture(startedAt, 42));
    expect((await deliver(report)).status).toBe(200);
    const done = await waitForCall(database.db, app.client(org.key), created.id, 'completed');
    expect(done).toMatchObject({
      duration_sec: 42,
      recording_url: 'https://storage.vapi.example/recordings/one.wav',
      llm_extracted_intent: 'book_demo',
      llm_sentiment: 'positive',
      llm_outcome: 'demo_booked',
      reason: null,
      transcript: [
        { role: 'agent', text: 'Hello, is this a good time?', start_ms: 500, end_ms: 2500 },
        { role: 'contact', text: 'Yes, go ahead.', start_ms: 3000, end_ms: 4000 },
      ],
    });
    // 42 s at the agent's rate (200 paise a minute by default): ceil(42 × 200 / 60) = 140.
    expect(done.credits_debited_paise).toBe(140);
  });

  it('acknowledges a redelivered report and a late status without a second change or event', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    const call = vapiCall(created.provider_call_id, created.id);
    const report = endOfCallReport(call, 'customer-busy', new Date());
    expect((await deliver(report)).status).toBe(200);
    await waitForCall(database.db, app.client(org.key), created.id, 'busy');
    const stored = await storedReports(created.provider_call_id);

    expect((await deliver(report)).status).toBe(200);
    expect((await deliver(statusUpdate(call, 'ringing', new Date(Date.now() - 60_000)))).status).toBe(200);
    expect((await deliver(statusUpdate(call, 'in-progress', new Date()))).status).toBe(200);

    const after = await fetchCall(app.client(org.key), created.id);
    expect(after).toMatchObject({ status: 'busy', reason: 'busy', duration_sec: null, credits_debited_paise: 0 });
    const kinds = (await eventsOfCall(database.db, created.id)).map((event) => event.kind);
    expect(kinds.filter((kind) => kind === 'call.busy')).toHaveLength(1);
    // The redelivered report was not stored again; the two late statuses were stored once each.
    expect(await storedReports(created.provider_call_id)).toBe(stored + 2);
  });

  it('applies reports that arrive out of order: the end first, then earlier statuses change nothing', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    const call = vapiCall(created.provider_call_id, created.id);
    expect((await deliver(statusUpdate(call, 'ringing', new Date()))).status).toBe(200);
    expect((await deliver(endOfCallReport(call, 'customer-did-not-answer', new Date()))).status).toBe(200);
    expect((await deliver(statusUpdate(call, 'queued', new Date(Date.now() - 10_000)))).status).toBe(200);
    const done = await waitForCall(database.db, app.client(org.key), created.id, 'no_answer');
    expect(done.reason).toBe('no_answer');
  });

  it('ends a failed call with the reason the table gives', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    const call = vapiCall(created.provider_call_id, created.id);
    expect((await deliver(endOfCallReport(call, 'twilio-failed-to-connect-call', new Date()))).status).toBe(200);
    const done = await waitForCall(database.db, app.client(org.key), created.id, 'failed');
    expect(done).toMatchObject({ reason: 'carrier_rejected', credits_debited_paise: 0 });
  });

  it('refuses a wrong, missing or stale signature with 401 and changes nothing', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    const call = vapiCall(created.provider_call_id, created.id);
    const body = endOfCallReport(call, 'customer-busy', new Date());
    expect((await deliver(body, new Date(), 'not-the-secret')).status).toBe(401);
    expect((await deliver(body, new Date(Date.now() - 6 * 60_000))).status).toBe(401);
    const unsigned = await fetch(`${app.baseUrl}/providers/vapi/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect(unsigned.status).toBe(401);
    expect(await storedReports(created.provider_call_id)).toBe(0);
    expect((await fetchCall(app.client(org.key), created.id)).status).toBe('queued');
  });

  it('holds a report that arrives before the placement is recorded and applies it then', async () => {
    const org = await vapiOrg();
    // Vapi creates the call at once but answers the placement only when told; its first report comes meanwhile.
    let answer = () => {};
    fake.script('POST /call', { act: true, gate: new Promise<void>((resolve) => (answer = resolve)), status: 201 });
    const before = new Set(fake.calls.keys());
    const placing = app
      .client(org.key)
      .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } });
    const vendor = await waitFor('Vapi to create the call', () =>
      [...fake.calls.values()].find((call) => !before.has(call['id'] as string)),
    );
    const callId = (vendor['assistantOverrides'] as { metadata: { platformCallId: string } }).metadata.platformCallId;
    const ringing = statusUpdate(vapiCall(vendor['id'] as string, callId), 'ringing', new Date());
    expect((await deliver(ringing)).status).toBe(200);
    expect(
      await database.db.selectFrom('calls').select('id').where('id', '=', callId).executeTakeFirst(),
    ).toBeUndefined();
    answer();
    const { data, response } = await placing;
    expect(response.status).toBe(201);
    expect(data!.data.id).toBe(callId);
    expect((await fetchCall(app.client(org.key), callId)).status).toBe('ringing');
  });

  it('records placements answered together with their own held reports, holds and counts', async () => {
    // An app of its own: a provider deadline no busy machine reaches before Vapi answers, and no worker
    // looking calls up meanwhile, so every status below is the one the placements left.
    const patient = await startTestApp(database, {
      workers: false,
      config: {
        vapiApiKey: 'vapi-e2e-key',
        vapiWebhookSecret: SECRET,
        vapiBaseUrl: fake.url,
        providerTimeoutMs: 60_000,
      },
    });
    try {
      const org = await vapiOrg();
      const PLACEMENTS = 16;
      // Vapi creates every call at once and answers them all together, so their second steps overlap and
      // share transactions; a report for every other call arrives before that.
      let answer = () => {};
      const gate = new Promise<void>((resolve) => (answer = resolve));
      for (let n = 0; n < PLACEMENTS; n += 1) fake.script('POST /call', { act: true, gate, status: 201 });
      const before = new Set(fake.calls.keys());
      const placing = Array.from({ length: PLACEMENTS }, () =>
        patient.client(org.key).POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } }),
      );
      const vendors = await waitFor('Vapi to create every call', () => {
        const made = [...fake.calls.values()].filter((call) => !before.has(call['id'] as string));
        return made.length === PLACEMENTS ? made : undefined;
      });
      const rung = new Set<string>();
      for (const [index, vendor] of vendors.entries()) {
        if (index % 2 === 1) continue;
        const callId = (vendor['assistantOverrides'] as { metadata: { platformCallId: string } }).metadata
          .platformCallId;
        rung.add(callId);
        const body = statusUpdate(vapiCall(vendor['id'] as string, callId), 'ringing', new Date());
        const delivered = await fetch(`${patient.baseUrl}/providers/vapi/events`, {
          method: 'POST',
          headers: signedHeaders(SECRET, body, new Date()),
          body,
        });
        expect(delivered.status).toBe(200);
      }
      answer();
      const answers = await Promise.all(placing);
      expect(answers.map(({ response }) => response.status)).toEqual(Array(PLACEMENTS).fill(201));
      // Each call carries the id of the Vapi call made for it.
      expect(new Set(answers.map(({ data }) => data!.data.provider_call_id))).toEqual(
        new Set(vendors.map((vendor) => vendor['id'])),
      );
      let held = 0;
      for (const { data } of answers) {
        const call = data!.data;
        expect((await fetchCall(patient.client(org.key), call.id)).status).toBe(
          rung.has(call.id) ? 'ringing' : 'queued',
        );
        const ledger = await ledgerOfCall(database.db, call.id);
        expect(ledger.map((row) => row.kind)).toEqual(['hold']);
        held += -ledger[0]!.amount_paise;
      }
      expect(held).toBeGreaterThan(0);
      expect(await balance(org.orgId)).toBe(100_000 - held);
      // The list totals come from the status counters the placements moved.
      const total = async (status: 'queued' | 'ringing') => {
        const { data } = await patient.client(org.key).GET('/calls', { params: { query: { status } } });
        return data!.pagination.total;
      };
      expect(await total('ringing')).toBe(rung.size);
      expect(await total('queued')).toBe(PLACEMENTS - rung.size);
    } finally {
      await patient.close();
    }
  });

  it('answers 201 with the call when recovery recorded it while the placement waited for its group', async () => {
    // The first placement below waits on its lock for the whole set-up (about 5 s on an idle machine),
    // longer than the test pool's 5 s statement timeout allows on a busy one: this app has its own pool
    // and request deadline, roomy enough that only the behaviour under test decides the answers.
    const roomy = connectDatabase(database.url, {
      poolSize: 10,
      namedStatements: true,
      statementTimeoutMs: 60_000,
      queryTimeoutMs: 65_000,
    });
    const patient = await startTestApp(
      { db: roomy.db, url: database.url },
      {
        config: { ...vapiConfig(), requestTimeoutMs: 120_000 },
      },
    );
    try {
      const org = await vapiOrg();
      const newVendorCall = async (before: Set<string>) => {
        const vendor = await waitFor('Vapi to create the call', () =>
          [...fake.calls.values()].find((call) => !before.has(call['id'] as string)),
        );
        const callId = (vendor['assistantOverrides'] as { metadata: { platformCallId: string } }).metadata
          .platformCallId;
        return { vendorId: vendor['id'] as string, callId };
      };
      const waitingOnLocks = async () =>
        Number(
          (
            await sql<{ count: string }>`SELECT count(*) AS count FROM pg_locks
              WHERE locktype = 'advisory' AND NOT granted`.execute(database.db)
          ).rows[0]!.count,
        );
      // Four placements whose groups take every recording place of the process and then wait on their Vapi
      // call's lock, held here (their recovery put off, so only the placement below is due for it).
      const releases: Array<() => void> = [];
      const holders: Array<Promise<void>> = [];
      const blockers: Array<Promise<{ response: Response }>> = [];
      for (let n = 0; n < 4; n += 1) {
        let answer = () => {};
        fake.script('POST /call', { act: true, gate: new Promise<void>((resolve) => (answer = resolve)), status: 201 });
        const before = new Set(fake.calls.keys());
        blockers.push(
          patient.client(org.key).POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } }),
        );
        const { vendorId, callId } = await newVendorCall(before);
        await database.db
          .updateTable('call_placements')
          .set({ recover_at: new Date(Date.now() + 3_600_000) })
          .where('id', '=', callId)
          .execute();
        let locked = () => {};
        const held = new Promise<void>((resolve) => (locked = resolve));
        holders.push(
          database.db.transaction().execute(async (trx) => {
            await lockProviderCallIds(trx, 'vapi', [vendorId]);
            locked();
            await new Promise<void>((resolve) => releases.push(resolve));
          }),
        );
        await held;
        answer();
        await waitFor('the group to wait on the lock', async () => (await waitingOnLocks()) === n + 1);
      }
      // Vapi takes this one at once; its recording waits for a free place until recovery has recorded it.
      const before = new Set(fake.calls.keys());
      const placing = patient
        .client(org.key)
        .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } });
      const { vendorId, callId } = await newVendorCall(before);
      await waitFor(
        'recovery to record the call',
        async () =>
          (await database.db.selectFrom('calls').select('id').where('id', '=', callId).executeTakeFirst()) !==
          undefined,
        20_000,
      );
      for (const release of releases) release();
      await Promise.all(holders);
      const { data, response } = await placing;
      expect(response.status).toBe(201);
      expect([data!.data.id, data!.data.provider_call_id]).toEqual([callId, vendorId]);
      expect((await Promise.all(blockers)).map(({ response: answered }) => answered.status)).toEqual([
        201, 201, 201, 201,
      ]);
      expect((await ledgerOfCall(database.db, callId)).map((row) => row.kind)).toEqual(['hold']);
    } finally {
      await patient.close();
      await roomy.db.destroy();
    }
  });

  it('does not apply a report whose Vapi call is not the one our call was placed as', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    // Signed, and naming our call in its metadata, but about another Vapi call.
    const other = vapiCall(crypto.randomUUID(), created.id);
    expect((await deliver(endOfCallReport(other, 'customer-busy', new Date()))).status).toBe(200);
    expect((await deliver(statusUpdate(other, 'ringing', new Date()))).status).toBe(200);
    // The worker may have looked the call up meanwhile: Vapi holds it queued (our dialing).
    expect(['queued', 'dialing']).toContain((await fetchCall(app.client(org.key), created.id)).status);
    expect(await eventsOfCall(database.db, created.id)).toEqual([]);
  });

  it('ends a call from a signed report whose transcript is malformed, without a 500', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    const call = vapiCall(created.provider_call_id, created.id);
    const startedAt = new Date(Date.now() - 30_000);
    const report = (messages: unknown, reason: string) =>
      JSON.stringify({
        message: {
          type: 'end-of-call-report',
          endedReason: reason,
          timestamp: Date.now(),
          call,
          startedAt: startedAt.toISOString(),
          endedAt: new Date(startedAt.getTime() + 20_000).toISOString(),
          artifact: { messages },
        },
      });
    expect((await deliver(report({ role: 'bot' }, 'customer-ended-call'))).status).toBe(200);
    expect((await deliver(report([null, 7, { role: 'bot', message: 'Hi', secondsFromStart: 1 }], 'x'))).status).toBe(
      200,
    );
    const done = await waitForCall(database.db, app.client(org.key), created.id, 'completed');
    expect(done).toMatchObject({ duration_sec: 20, transcript: [] });
  });

  it('takes a signed report carrying NUL characters without a 500', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    const call = vapiCall(created.provider_call_id, created.id);
    const startedAt = new Date(Date.now() - 30_000);
    const body = JSON.stringify({
      message: {
        type: 'end-of-call-report',
        endedReason: 'customer-ended-call',
        timestamp: Date.now(),
        call,
        startedAt: startedAt.toISOString(),
        endedAt: new Date(startedAt.getTime() + 20_000).toISOString(),
        artifact: {
          recordingUrl: 'https://storage.vapi.example/a\u0000b.wav',
          messages: [{ role: 'bot', message: 'Hi\u0000there', secondsFromStart: 1 }],
        },
        analysis: { structuredData: { intent: 'book\u0000demo' } },
      },
    });
    expect((await deliver(body)).status).toBe(200);
    const stray = JSON.stringify({
      message: { type: 'status-update', status: 'ringing', timestamp: Date.now(), call: { id: 'x\u0000y' } },
    });
    expect((await deliver(stray)).status).toBe(200);
    const done = await waitForCall(database.db, app.client(org.key), created.id, 'completed');
    expect(done).toMatchObject({ duration_sec: 20, recording_url: null, llm_extracted_intent: 'bookdemo' });
    expect(done.transcript).toEqual([{ role: 'agent', text: 'Hithere', start_ms: 1000, end_ms: 1000 }]);
  });

  it('acknowledges a report about a call nobody knows', async () => {
    const call = vapiCall(crypto.randomUUID(), crypto.randomUUID());
    const answer = await deliver(endOfCallReport(call, 'customer-ended-call', new Date()));
    expect(answer.status).toBe(200);
  });
});

describe('stopping a Vapi call', () => {
  it('cancels a queued call through its control URL', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    const { data, response } = await app
      .client(org.key)
      .POST('/calls/{id}/cancel', { params: { path: { id: created.id } } });
    expect(response.status).toBe(200);
    expect(data!.data).toMatchObject({ status: 'canceled', reason: 'canceled_by_client', credits_debited_paise: 0 });
    const control = fake.received.filter((request) => request.path === `/control/${created.provider_call_id}`);
    expect(control).toHaveLength(1);
    // The control URL takes no credential unless it is set up for Vapi's public key; the private key never goes there.
    expect(control[0]!.authorization).toBeUndefined();
  });

  it('answers invalid_state when Vapi cannot stop the call', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    delete fake.calls.get(created.provider_call_id)!['monitor'];
    const { error, response } = await app
      .client(org.key)
      .POST('/calls/{id}/cancel', { params: { path: { id: created.id } } });
    expect(response.status).toBe(409);
    expect(error).toMatchObject({ error: { code: 'invalid_state' } });
  });

  it('never posts to a control URL off the hosts of Vapi, and sends it no credential', async () => {
    const received: Array<string | undefined> = [];
    const elsewhere = http.createServer((request, response) => {
      received.push(request.headers.authorization);
      response.writeHead(200).end();
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, 'localhost', resolve));
    try {
      const org = await vapiOrg();
      const created = await place(org);
      const { port } = elsewhere.address() as AddressInfo;
      fake.calls.get(created.provider_call_id)!['monitor'] = { controlUrl: `http://localhost:${port}/control` };
      const { error, response } = await app
        .client(org.key)
        .POST('/calls/{id}/cancel', { params: { path: { id: created.id } } });
      expect(response.status).toBe(409);
      expect(error).toMatchObject({ error: { code: 'invalid_state' } });
      expect(received).toEqual([]);
      expect((await fetchCall(app.client(org.key), created.id)).status).not.toBe('canceled');
    } finally {
      await new Promise((resolve) => elsewhere.close(resolve));
    }
  });

  it('hangs a connected call up at its max_duration_sec and ends it completed', async () => {
    const org = await vapiOrg();
    const created = await place(org, { max_duration_sec: 15 });
    const call = vapiCall(created.provider_call_id, created.id);
    // Connected 20 s ago: its 15 s ran out 5 s ago, so the next look hangs it up at that moment.
    const startedAt = new Date(Date.now() - 20_000);
    Object.assign(fake.calls.get(created.provider_call_id)!, {
      status: 'in-progress',
      startedAt: startedAt.toISOString(),
    });
    expect((await deliver(statusUpdate(call, 'in-progress', startedAt))).status).toBe(200);
    const done = await waitForCall(database.db, app.client(org.key), created.id, 'completed');
    expect(done.duration_sec).toBe(15);
    expect(fake.received.some((request) => request.path === `/control/${created.provider_call_id}`)).toBe(true);
  });
});

describe('when Vapi fails or goes quiet', () => {
  it('answers upstream_error on 429 with Retry-After and charges nothing', async () => {
    const org = await vapiOrg(10_000);
    fake.script('POST /call', { status: 429, headers: { 'retry-after': '3' }, body: { message: 'Too Many Requests' } });
    const { error, response } = await app
      .client(org.key)
      .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } });
    expect(response.status).toBe(502);
    expect(error).toMatchObject({ error: { code: 'upstream_error' } });
    expect(await balance(org.orgId)).toBe(10_000);
    const { data } = await app.client(org.key).GET('/calls', {});
    expect(data!.data).toEqual([]);
  });

  it.each([
    ['a 500', { status: 500, body: { message: 'Internal server error' } }],
    ['no answer before PROVIDER_TIMEOUT_MS', { delayMs: 3_000, status: 201, body: {} }],
    ['a reset connection', { destroy: true }],
  ])('after %s, never dials again and tracks the call Vapi did create', async (_, scripted) => {
    const org = await vapiOrg();
    fake.script('POST /call', { ...scripted, act: true });
    const before = fake.received.filter((request) => request.method === 'POST' && request.path === '/call').length;
    const { response } = await app
      .client(org.key)
      .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } });
    expect(response.status).toBe(503);
    // Reconciliation finds the call Vapi made by our id and records it: one call, one dial.
    const row = await waitFor('the placement to be reconciled into a call', async () =>
      database.db
        .selectFrom('calls')
        .select(['id', 'provider_call_id'])
        .where('org_id', '=', org.orgId)
        .executeTakeFirst(),
    );
    expect(fake.calls.get(row.provider_call_id)?.['assistantOverrides']).toMatchObject({
      metadata: { platformCallId: row.id },
    });
    const after = fake.received.filter((request) => request.method === 'POST' && request.path === '/call').length;
    expect(after - before).toBe(1);
  });

  it('takes a 2xx other than 201 as the call placed, never as a refusal', async () => {
    const org = await vapiOrg(10_000);
    fake.script('POST /call', { status: 200, act: true });
    const { data, response } = await app
      .client(org.key)
      .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } });
    expect(response.status).toBe(201);
    expect(fake.calls.get(data!.data.provider_call_id)?.['assistantOverrides']).toMatchObject({
      metadata: { platformCallId: data!.data.id },
    });
  });

  it('does not take a full page of other calls for "Vapi never made it", so never dials twice', async () => {
    const org = await vapiOrg();
    fake.script('POST /call', { status: 500, body: { message: 'Internal server error' }, act: true });
    // The search by our id gets as many calls as it asked for, none of them ours: it saw only part of the list.
    const others = Array.from({ length: 1000 }, () => vapiCall(crypto.randomUUID(), crypto.randomUUID()));
    fake.script('GET /call?', { status: 200, body: others });
    const dials = () => fake.received.filter((request) => request.method === 'POST' && request.path === '/call').length;
    const before = dials();
    const { response } = await app
      .client(org.key)
      .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } });
    expect(response.status).toBe(503);
    const row = await waitFor('the placement to be reconciled into a call', async () =>
      database.db.selectFrom('calls').select(['id']).where('org_id', '=', org.orgId).executeTakeFirst(),
    );
    expect(row.id).toBeDefined();
    expect(fake.received.filter((request) => request.path.startsWith('/call?')).length).toBeGreaterThanOrEqual(2);
    expect(dials() - before).toBe(1);
  });

  it('reconciles a call whose webhooks never came with GET /call/{id}', async () => {
    const org = await vapiOrg();
    const created = await place(org);
    const startedAt = new Date(Date.now() - 40_000);
    const { artifact, analysis, endedAt } = conversationFixture(startedAt, 30);
    Object.assign(fake.calls.get(created.provider_call_id)!, {
      status: 'ended',
      endedReason: 'assistant-ended-call',
      startedAt: startedAt.toISOString(),
      endedAt,
      artifact,
      analysis,
    });
    const done = await waitForCall(database.db, app.client(org.key), created.id, 'completed');
    expect(done).toMatchObject({ duration_sec: 30, llm_outcome: 'demo_booked' });
    expect(
      fake.received.some((request) => request.method === 'GET' && request.path === `/call/${created.provider_call_id}`),
    ).toBe(true);
  });

  it('ends a call Vapi does not know failed with provider_error and releases its hold', async () => {
    const org = await vapiOrg(10_000);
    const created = await place(org);
    fake.calls.delete(created.provider_call_id);
    const done = await waitForCall(database.db, app.client(org.key), created.id, 'failed');
    expect(done).toMatchObject({ reason: 'provider_error', credits_debited_paise: 0 });
    expect(await balance(org.orgId)).toBe(10_000);
    expect((await ledgerOfCall(database.db, created.id)).reduce((sum, row) => sum + Number(row.amount_paise), 0)).toBe(
      0,
    );
  });
});
