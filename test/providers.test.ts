// The provider-neutral core through real HTTP and PostgreSQL, with a provider that exists only in this
// test: signed webhooks applied once and forward-only, reports held until their placement is recorded,
// refusals that leave nothing, unanswered placements reconciled and never dialed twice, a process
// killed with SIGKILL between the two transactions (exactly one call tracked to its end, or none and
// the hold released), reconciliation of silent calls, and no pool connection held while the provider
// answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { connectDatabase } from '../src/database/connect.js';
import { spawnReady } from './support/child-process.js';
import { logProviderReadiness } from '../src/calls/provider-readiness.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import {
  countCallRows,
  eventsOfCall,
  fetchCall,
  ledgerOfCall,
  testNumber,
  waitFor,
  waitForCall,
} from './support/calls.js';
import type { Conversation } from '../src/calls/provider/types.js';
import { refuse, signedHeaders, testProviderModule, TestProvider, type WireEvent } from './support/test-provider.js';

let database: TestDatabase;
let provider: TestProvider;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  provider = new TestProvider();
  app = await startTestApp(database, {
    providers: [testProviderModule(provider)],
    config: { providerTimeoutMs: 300, providerReconcileAfterS: 1, callPollIntervalMs: 50 },
  });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** A fresh org whose agent calls through the test provider; default behaviour restored. */
async function providerOrg(credits = 100_000): Promise<TestOrg> {
  provider.onPlace = new TestProvider().onPlace;
  provider.stopAnswer = { stopped: true, conversation: null };
  return createTestOrg(database.db, { credits, agent: { provider: 'testvoice', ratePaisePerMinute: 600 } });
}

/** Posts `events` to the provider webhook route, signed unless `headers` replace the signature. */
async function post(events: WireEvent[], headers?: Record<string, string>) {
  const body = JSON.stringify({ events });
  const response = await fetch(`${app.baseUrl}/providers/testvoice/events`, {
    method: 'POST',
    headers: headers ?? signedHeaders(body),
    body,
  });
  return { status: response.status, body: (await response.json()) as unknown };
}

/** How many reports of each result the app counted. */
async function webhookResults(): Promise<Record<string, number>> {
  const metric = await app.deps.metrics.providerWebhooks.get();
  return Object.fromEntries(metric.values.map((value) => [String(value.labels.result), value.value]));
}

const CONVERSATION: Conversation = {
  durationSec: 30,
  recordingUrl: 'https://recordings.example.com/1.mp3',
  transcript: [{ role: 'agent', text: 'Hello', start_ms: 0, end_ms: 900 }],
  analysis: { intent: 'book_demo', sentiment: 'positive', outcome: 'demo_booked' },
};

function at(offsetSec: number): string {
  return new Date(Date.now() + offsetSec * 1000).toISOString();
}

async function placed(org: TestOrg, to = testNumber('7777'), key?: string) {
  const response = await app.client(org.key).POST('/calls', {
    body: { agent_id: org.agentId, to_e164: to },
    ...(key ? { headers: { 'Idempotency-Key': key } } : {}),
  });
  return response;
}

describe('provider webhooks', () => {
  it('refuses a missing, wrong or stale signature with 401 and stores nothing', async () => {
    const org = await providerOrg();
    const { data } = await placed(org);
    const call = data!.data;
    const events: WireEvent[] = [
      { key: 'k1', callId: call.id, event: { type: 'status', status: 'ringing', at: at(0) } },
    ];
    const body = JSON.stringify({ events });
    const before = (await webhookResults()).refused_signature ?? 0;
    expect((await post(events, { 'content-type': 'application/json' })).status).toBe(401);
    expect((await post(events, signedHeaders(body, { secret: 'not-the-secret' }))).status).toBe(401);
    expect((await post(events, signedHeaders(body, { atSec: Math.floor(Date.now() / 1000) - 600 }))).status).toBe(401);
    expect((await webhookResults()).refused_signature).toBe(before + 3);
    const stored = await database.db
      .selectFrom('provider_events')
      .select('id')
      .where('call_id', '=', call.id)
      .execute();
    expect(stored).toEqual([]);
    expect((await fetchCall(app.client(org.key), call.id)).status).toBe('queued');
  });

  it('applies reports once and forward-only: duplicates, a late ringing and a second end change nothing', async () => {
    const org = await providerOrg();
    const { data } = await placed(org);
    const call = data!.data;
    expect(call.provider).toBe('testvoice');
    const ids = { providerCallId: call.provider_call_id };
    const ended: WireEvent = {
      key: 'e1',
      ...ids,
      event: { type: 'ended', at: at(35), ending: { status: 'completed', reason: null, conversation: CONVERSATION } },
    };
    expect(
      await post([
        { key: 'r1', ...ids, event: { type: 'status', status: 'ringing', at: at(1) } },
        { key: 'p1', callId: call.id, event: { type: 'status', status: 'in_progress', at: at(5) } },
      ]),
    ).toEqual({ status: 200, body: { received: 2 } });
    expect((await post([ended])).status).toBe(200);
    const before = await webhookResults();
    expect((await post([ended])).status).toBe(200);
    expect((await webhookResults()).duplicate).toBe((before.duplicate ?? 0) + 1);
    expect((await post([{ key: 'r2', ...ids, event: { type: 'status', status: 'ringing', at: at(40) } }])).status).toBe(
      200,
    );
    const secondEnd: WireEvent = {
      key: 'e2',
      ...ids,
      event: { type: 'ended', at: at(41), ending: { status: 'failed', reason: 'provider_error', conversation: null } },
    };
    expect((await post([secondEnd])).status).toBe(200);

    const detail = await fetchCall(app.client(org.key), call.id);
    expect(detail).toMatchObject({
      status: 'completed',
      duration_sec: 30,
      credits_debited_paise: 300,
      llm_outcome: 'demo_booked',
    });
    const statuses = detail.timeline.filter((entry) => entry.kind === 'status-changed').map((entry) => entry.detail);
    expect(statuses.map((detail) => (detail as { status: string }).status)).toEqual([
      'queued',
      'dialing',
      'ringing',
      'in_progress',
      'completed',
    ]);
    expect((await eventsOfCall(database.db, call.id)).map((event) => event.kind)).toEqual(['call.completed']);
  });

  it('holds reports that arrive before the placement is recorded, and applies them then', async () => {
    const org = await providerOrg();
    const providerCallId = `tv_early_${randomUUID()}`;
    let early: Array<{ status: number }> = [];
    provider.onPlace = async (request) => {
      early = [
        await post([
          {
            key: `${providerCallId}:d`,
            callId: request.callId,
            event: { type: 'status', status: 'dialing', at: at(0) },
          },
        ]),
        await post([
          { key: `${providerCallId}:r`, providerCallId, event: { type: 'status', status: 'ringing', at: at(1) } },
        ]),
      ];
      return { providerCallId, nextLookupAt: null };
    };
    const { data, response } = await placed(org);
    expect(response.status).toBe(201);
    expect(early.map((answer) => answer.status)).toEqual([200, 200]);
    expect(data!.data).toMatchObject({ status: 'queued', provider_call_id: providerCallId });
    expect((await fetchCall(app.client(org.key), data!.data.id)).status).toBe('ringing');
  });

  it('acknowledges a report for a call nobody knows, and counts it', async () => {
    const before = (await webhookResults()).unknown_call ?? 0;
    const answers = [
      await post([
        { key: `u-${randomUUID()}`, callId: randomUUID(), event: { type: 'status', status: 'ringing', at: at(0) } },
      ]),
      await post([
        { key: `u-${randomUUID()}`, callId: 'not-our-id', event: { type: 'status', status: 'ringing', at: at(0) } },
      ]),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect((await webhookResults()).unknown_call).toBe(before + 2);
  });

  it('answers 404 for a provider this service does not have', async () => {
    const response = await fetch(`${app.baseUrl}/providers/nope/events`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(404);
  });
});

describe('placement in two steps', () => {
  it('a refusal leaves no call, no ledger row and a free Idempotency-Key', async () => {
    const org = await providerOrg(50_000);
    provider.onPlace = () => refuse('The number is on the provider’s block list.');
    const to = testNumber('7777');
    const refused = await placed(org, to, 'refused-then-ok');
    expect(refused.response.status).toBe(502);
    expect(refused.error!.error).toMatchObject({
      code: 'upstream_error',
      message: 'The number is on the provider’s block list.',
    });
    expect(await countCallRows(database.db, org.orgId)).toBe(0);
    const ledger = await database.db
      .selectFrom('credit_ledger')
      .select('kind')
      .where('org_id', '=', org.orgId)
      .execute();
    expect(ledger).toEqual([{ kind: 'top_up' }]);
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 50_000, ledgerSum: 50_000 });
    provider.onPlace = new TestProvider().onPlace;
    const accepted = await placed(org, to, 'refused-then-ok');
    expect(accepted.response.status).toBe(201);
    expect(accepted.response.headers.get('Idempotent-Replayed')).toBeNull();
  });

  it('an agent whose provider is not configured refuses with upstream_error and charges nothing', async () => {
    const org = await createTestOrg(database.db, { credits: 50_000, agent: { provider: 'vapi' } });
    const refused = await placed(org);
    expect(refused.response.status).toBe(502);
    expect(refused.error!.error.code).toBe('upstream_error');
    expect(refused.error!.error.message).toContain('(vapi) is not configured');
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 50_000, ledgerSum: 50_000 });
    const held = await database.db
      .selectFrom('orgs')
      .select('held_paise')
      .where('id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    expect(Number(held.held_paise)).toBe(0);
  });

  it('checks credits before the provider, in the order the spec gives: 402 when both would refuse', async () => {
    const org = await createTestOrg(database.db, { credits: 0, agent: { provider: 'vapi' } });
    const refused = await placed(org);
    expect(refused.response.status).toBe(402);
    expect(refused.error!.error.code).toBe('insufficient_credits');
  });

  it('an unanswered placement is reconciled, never dialed again, and replays as the one call', async () => {
    const org = await providerOrg();
    const dialed = provider.placements.length;
    provider.onPlace = (request) => {
      // The provider takes the call but its answer never arrives.
      provider.known.set(request.callId, {
        providerCallId: `tv_late_${request.callId}`,
        events: [
          { type: 'status', status: 'in_progress', at: new Date() },
          { type: 'ended', at: new Date(), ending: { status: 'completed', reason: null, conversation: CONVERSATION } },
        ],
      });
      return new Promise((_, reject) =>
        request.signal.addEventListener('abort', () => reject(request.signal.reason as Error)),
      );
    };
    const to = testNumber('7777');
    const first = await placed(org, to, 'slow-provider');
    expect(first.response.status).toBe(503);
    expect(first.error!.error.code).toBe('service_unavailable');
    expect(first.response.headers.get('Retry-After')).toBe('5');
    expect((await app.client(org.key).GET('/calls')).data!.pagination.total).toBe(0);
    // Until reconciliation has recovered the call, the key answers 503 again; once it has (on a busy
    // machine it may run before this request), the key replays the call, checked below.
    const early = await placed(org, to, 'slow-provider');
    expect(
      [early.response.status, early.error?.error.code],
      'the same key while the placement is unsettled, or once it is recovered',
    ).toSatisfy(([status, code]) => (status === 503 && code === 'service_unavailable') || status === 201);

    const [callId] = [...provider.known.keys()].slice(-1);
    const call = await waitFor('the placement to be recovered as a call', async () =>
      database.db.selectFrom('calls').select(['id', 'status']).where('id', '=', callId!).executeTakeFirst(),
    );
    await waitForCall(database.db, app.client(org.key), call.id, 'completed');
    const replay = await placed(org, to, 'slow-provider');
    expect([replay.response.status, replay.response.headers.get('Idempotent-Replayed')]).toEqual([201, 'true']);
    expect(replay.data!.data).toMatchObject({ id: callId, provider_call_id: `tv_late_${callId}` });
    expect(provider.placements.length).toBe(dialed + 1);
    expect(await ledgerOfCall(database.db, callId!)).toEqual([
      { kind: 'hold', amount_paise: -6000 },
      { kind: 'release', amount_paise: 6000 },
      { kind: 'charge', amount_paise: -300 },
    ]);
  });

  it('an unanswered placement the provider never took is voided and its hold returned', async () => {
    const org = await providerOrg(50_000);
    provider.onPlace = (request) =>
      new Promise((_, reject) => request.signal.addEventListener('abort', () => reject(new Error('ECONNRESET'))));
    const to = testNumber('7777');
    const first = await placed(org, to, 'never-taken');
    expect(first.response.status).toBe(503);
    expect((await balanceAndLedgerSum(database.db, org.orgId)).balance).toBe(44_000);
    await waitFor(
      'the placement to be voided',
      async () =>
        (await database.db.selectFrom('call_placements').select('id').where('org_id', '=', org.orgId).execute())
          .length === 0,
    );
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 50_000, ledgerSum: 50_000 });
    expect(await countCallRows(database.db, org.orgId)).toBe(0);
    provider.onPlace = new TestProvider().onPlace;
    const again = await placed(org, to, 'never-taken');
    expect([again.response.status, again.response.headers.get('Idempotent-Replayed')]).toEqual([201, null]);
  });
});

describe('SIGKILL between the two transactions', () => {
  /** Starts an API process whose provider never answers, places a call on it and kills it with SIGKILL once the provider was asked. */
  async function killedMidPlacement(org: TestOrg): Promise<string> {
    const child = await spawnReady(process.execPath, ['--import', 'tsx', 'test/support/placing-process.ts'], {
      env: { ...process.env, PLACING_DATABASE_URL: database.url },
      ready: /listening (\d+)\n/,
      timeoutMs: 30_000,
      name: 'the placing process',
    });
    const answer = fetch(`http://127.0.0.1:${child.match[1]}/api/v1/calls`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: org.agentId, to_e164: testNumber('7777') }),
    }).catch(() => null);
    const callId = await waitFor('the provider to be asked', () => /placing (\S+)\n/.exec(child.output())?.[1]);
    child.process.kill('SIGKILL');
    await child.exited;
    expect(await answer).toBeNull();
    // The dead process's placement: hold reserved, no call, no ledger row. Its request's deadline (the
    // child's PROVIDER_TIMEOUT_MS and a grace) is moved to now, as if that time had passed.
    expect(await countCallRows(database.db, org.orgId)).toBe(0);
    expect((await balanceAndLedgerSum(database.db, org.orgId)).balance).toBe(44_000);
    await database.db.updateTable('call_placements').set({ recover_at: new Date() }).where('id', '=', callId).execute();
    return callId;
  }

  it('ends with no call and the hold released when the provider never took it', async () => {
    const org = await providerOrg(50_000);
    await killedMidPlacement(org);
    await waitFor(
      'the placement to be voided',
      async () =>
        (await database.db.selectFrom('call_placements').select('id').where('org_id', '=', org.orgId).execute())
          .length === 0,
    );
    expect(await countCallRows(database.db, org.orgId)).toBe(0);
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 50_000, ledgerSum: 50_000 });
  });

  it('ends with one call tracked to its end when the provider took it', async () => {
    const org = await providerOrg(50_000);
    const callId = await killedMidPlacement(org);
    provider.known.set(callId, {
      providerCallId: `tv_killed_${callId}`,
      events: [
        { type: 'status', status: 'in_progress', at: new Date() },
        { type: 'ended', at: new Date(), ending: { status: 'completed', reason: null, conversation: CONVERSATION } },
      ],
    });
    const call = await waitForCall(
      database.db,
      app.client(org.key),
      await waitFor(
        'the call',
        async () =>
          (await database.db.selectFrom('calls').select('id').where('id', '=', callId).executeTakeFirst())?.id,
      ),
    );
    expect(call).toMatchObject({
      status: 'completed',
      provider_call_id: `tv_killed_${callId}`,
      credits_debited_paise: 300,
    });
    expect((await eventsOfCall(database.db, callId)).map((event) => event.kind)).toEqual(['call.completed']);
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 49_700, ledgerSum: 49_700 });
  });
});

describe('reconciliation', () => {
  it('brings a call whose webhooks never came up to date', async () => {
    const org = await providerOrg();
    const { data } = await placed(org);
    const call = data!.data;
    provider.known.set(call.id, {
      providerCallId: call.provider_call_id,
      events: [
        { type: 'status', status: 'ringing', at: new Date() },
        { type: 'ended', at: new Date(), ending: { status: 'no_answer', reason: 'no_answer', conversation: null } },
      ],
    });
    const detail = await waitForCall(database.db, app.client(org.key), call.id);
    expect(detail).toMatchObject({ status: 'no_answer', reason: 'no_answer' });
  });

  it('ends a call its provider does not know as failed (provider_error), its hold released', async () => {
    const org = await providerOrg(50_000);
    const { data } = await placed(org);
    const detail = await waitForCall(database.db, app.client(org.key), data!.data.id);
    expect(detail).toMatchObject({ status: 'failed', reason: 'provider_error', credits_debited_paise: 0 });
    expect(await ledgerOfCall(database.db, detail.id)).toEqual([
      { kind: 'hold', amount_paise: -6000 },
      { kind: 'release', amount_paise: 6000 },
    ]);
    expect((await eventsOfCall(database.db, detail.id)).map((event) => event.data)).toEqual([
      expect.objectContaining({ status: 'failed', reason: 'provider_error' }),
    ]);
    const lookups = await app.deps.metrics.providerLookups.get();
    expect(lookups.values.find((value) => value.labels.outcome === 'not_found')?.value).toBeGreaterThan(0);
  });
});

describe('max_duration_sec', () => {
  it('keeps what the provider reported when it ended the call itself at the limit', async () => {
    const org = await providerOrg();
    const { data } = await app.client(org.key).POST('/calls', {
      body: { agent_id: org.agentId, to_e164: testNumber('7777'), max_duration_sec: 15 },
    });
    const call = data!.data;
    provider.stopAnswer = { stopped: false, message: 'the call has already ended' };
    provider.known.set(call.id, {
      providerCallId: call.provider_call_id,
      events: [
        { type: 'status', status: 'in_progress', at: new Date(Date.now() - 20_000) },
        {
          type: 'ended',
          at: new Date(Date.now() - 4_000),
          ending: { status: 'completed', reason: null, conversation: { ...CONVERSATION, durationSec: 16 } },
        },
      ],
    });
    const detail = await waitForCall(database.db, app.client(org.key), call.id);
    expect(detail).toMatchObject({
      status: 'completed',
      duration_sec: 15,
      credits_debited_paise: 150,
      recording_url: CONVERSATION.recordingUrl,
      llm_outcome: 'demo_booked',
    });
    expect(detail.ended_at).toBe(new Date(new Date(detail.started_at!).getTime() + 15_000).toISOString());
  });
});

describe('lookup rate', () => {
  it("spaces one process's lookups to a provider at its rate, and counts those that waited", async () => {
    const throttled = async () =>
      (await app.deps.metrics.providerLookupsThrottled.get()).values.find(
        (value) => value.labels.provider === 'testvoice',
      )?.value ?? 0;
    const before = await throttled();
    provider.lookupsPerSecond = 2;
    try {
      const org = await providerOrg();
      const ids = [];
      for (let i = 0; i < 3; i += 1) ids.push((await placed(org)).data!.data.id);
      for (const id of ids) await waitForCall(database.db, app.client(org.key), id, 'failed');
      expect(await throttled()).toBeGreaterThan(before);
    } finally {
      provider.lookupsPerSecond = 100;
    }
  });
});

describe('cancel', () => {
  it('answers invalid_state when the provider cannot stop the call, and cancels when it can', async () => {
    const org = await providerOrg();
    const { data } = await placed(org);
    const call = data!.data;
    provider.known.set(call.id, { providerCallId: call.provider_call_id, events: [] });
    provider.stopAnswer = { stopped: false, message: 'the provider offers no way to stop this call' };
    const client = app.client(org.key);
    const refused = await client.POST('/calls/{id}/cancel', { params: { path: { id: call.id } } });
    expect(refused.response.status).toBe(409);
    expect(refused.error!.error).toMatchObject({
      code: 'invalid_state',
      message: 'The call cannot be canceled: the provider offers no way to stop this call',
    });
    const stop = provider.stop.bind(provider);
    provider.stop = () => Promise.reject(new Error('ECONNRESET'));
    const failed = await client.POST('/calls/{id}/cancel', { params: { path: { id: call.id } } });
    provider.stop = stop;
    expect(failed.response.status).toBe(502);
    expect(failed.error!.error.code).toBe('upstream_error');
    expect((await fetchCall(client, call.id)).status).toBe('queued');
    provider.stopAnswer = { stopped: true, conversation: null };
    const canceled = await client.POST('/calls/{id}/cancel', { params: { path: { id: call.id } } });
    expect(canceled.response.status).toBe(200);
    expect(canceled.data!.data).toMatchObject({ status: 'canceled', reason: 'canceled_by_client' });
  });
});

describe('no pool connection held while the provider answers', () => {
  it('with DB_POOL_SIZE=2, six placements wait on the provider at once and another org still reads', async () => {
    const small = connectDatabase(database.url, { poolSize: 2, namedStatements: true });
    const slow = new TestProvider();
    const waiting: Array<() => void> = [];
    slow.onPlace = async () => {
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { providerCallId: `tv_${randomUUID()}`, nextLookupAt: null };
    };
    const pooled = await startTestApp(
      { db: small.db, url: database.url },
      { workers: false, pool: small.pool, providers: [testProviderModule(slow)], config: { dbPoolSize: 2 } },
    );
    try {
      const org = await createTestOrg(database.db, { agent: { provider: 'testvoice' } });
      const other = await createTestOrg(database.db);
      const placements = Array.from({ length: 6 }, () =>
        pooled.client(org.key).POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('7777') } }),
      );
      await waitFor('six placements waiting on the provider', () => waiting.length === 6, 10_000);
      const inUse = await pooled.deps.metrics.registry.getSingleMetric('voice_call_db_pool_connections_in_use')!.get();
      expect(inUse.values[0]!.value).toBe(0);
      const read = await pooled.client(other.key).GET('/calls');
      expect(read.response.status).toBe(200);
      for (const release of waiting) release();
      expect((await Promise.all(placements)).map((answer) => answer.response.status)).toEqual(Array(6).fill(201));
    } finally {
      await pooled.close();
      await small.db.destroy();
    }
  });
});

describe('start-up', () => {
  it('logs the configured providers and warns about agents whose provider is not configured', async () => {
    await createTestOrg(database.db, { agent: { provider: 'vapi' } });
    const lines: Array<{ level: number; msg: string; provider?: string }> = [];
    const logged = await startTestApp(database, {
      workers: false,
      providers: [testProviderModule(provider)],
      config: { logLevel: 'info' },
      logStream: { write: (line) => lines.push(JSON.parse(line) as (typeof lines)[number]) },
    });
    try {
      await logProviderReadiness(logged.deps);
    } finally {
      await logged.close();
    }
    expect(lines.find((line) => line.msg.startsWith('voice providers configured'))?.msg).toBe(
      'voice providers configured: simulator, testvoice',
    );
    const warning = lines.find((line) => line.level === 40 && line.provider === 'vapi');
    expect(warning?.msg).toMatch(/agent\(s\) use the voice provider vapi, which is not configured here/);
  });
});
