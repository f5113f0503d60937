// POST /calls over HTTP: validation with `param`, the order of the pre-call checks, the hold, and
// concurrent placements that must never overdraw the balance.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp } from './support/app.js';
import type { ErrorResponse } from './support/json.js';
import { countCallRows, ledgerOfCall, testNumber } from './support/calls.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';

const HOLD = 2000; // the test agent: 200 paise per minute, max_duration_sec 600

let database: TestDatabase;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  // No workers: placed calls stay queued and keep their holds, so the arithmetic below is exact.
  app = await startTestApp(database, { workers: false });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

async function expectNothingWritten(orgId: string, credits: number) {
  expect(await countCallRows(database.db, orgId)).toBe(0);
  const ledger = await database.db.selectFrom('credit_ledger').select('kind').where('org_id', '=', orgId).execute();
  expect(ledger).toEqual(credits > 0 ? [{ kind: 'top_up' }] : []);
  const keys = await database.db
    .selectFrom('call_idempotency_keys')
    .select('key')
    .where('org_id', '=', orgId)
    .execute();
  expect(keys).toEqual([]);
  expect(await balanceAndLedgerSum(database.db, orgId)).toEqual({ balance: credits, ledgerSum: credits });
}

describe('POST /calls validation', () => {
  const cases: [string, (agentId: string) => unknown, string][] = [
    ['a number that is not E.164', (agent_id) => ({ agent_id, to_e164: '09812345678' }), 'to_e164'],
    [
      'a from number that is not E.164',
      (agent_id) => ({ agent_id, to_e164: '+919812345678', from_e164: '+0123' }),
      'from_e164',
    ],
    ['an agent_id that is not a UUID', () => ({ agent_id: 'agent-1', to_e164: '+919812345678' }), 'agent_id'],
    ['a missing agent_id', () => ({ to_e164: '+919812345678' }), 'agent_id'],
    [
      'a language that is not xx-XX',
      (agent_id) => ({ agent_id, to_e164: '+919812345678', language: 'english' }),
      'language',
    ],
    [
      'max_duration_sec below 15',
      (agent_id) => ({ agent_id, to_e164: '+919812345678', max_duration_sec: 5 }),
      'max_duration_sec',
    ],
    [
      'max_duration_sec above 3600',
      (agent_id) => ({ agent_id, to_e164: '+919812345678', max_duration_sec: 99999 }),
      'max_duration_sec',
    ],
    [
      'metadata with 51 keys',
      (agent_id) => ({
        agent_id,
        to_e164: '+919812345678',
        metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])),
      }),
      'metadata',
    ],
    [
      'a metadata value that is an object',
      (agent_id) => ({ agent_id, to_e164: '+919812345678', metadata: { a: { b: 1 } } }),
      'metadata.a',
    ],
    ['an unknown field', (agent_id) => ({ agent_id, to_e164: '+919812345678', priority: 'high' }), 'priority'],
  ];

  for (const [name, body, param] of cases) {
    it(`refuses ${name} with invalid_request param ${param} and writes nothing`, async () => {
      const org = await createTestOrg(database.db, { credits: 10_000 });
      const response = await rawRequest<ErrorResponse>(app, 'POST', '/calls', {
        headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json', 'Idempotency-Key': 'k-1' },
        body: JSON.stringify(body(org.agentId)),
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_request', param });
      expect(response.body.error.details![param]).toEqual(expect.arrayContaining([expect.any(String)]));
      await expectNothingWritten(org.orgId, 10_000);
    });
  }

  it('refuses a malformed Idempotency-Key with param Idempotency-Key', async () => {
    const org = await createTestOrg(database.db, { credits: 10_000 });
    const { error, response } = await app.client(org.key).POST('/calls', {
      body: { agent_id: org.agentId, to_e164: testNumber('7777') },
      headers: { 'Idempotency-Key': 'has spaces in it' },
    });
    expect(response.status).toBe(400);
    expect(error!.error).toMatchObject({ code: 'invalid_request', param: 'Idempotency-Key' });
    await expectNothingWritten(org.orgId, 10_000);
  });
});

describe('POST /calls pre-call checks, in order', () => {
  it('an agent of another org is not_found (param agent_id), even without a plan or credits', async () => {
    const other = await createTestOrg(database.db);
    const org = await createTestOrg(database.db, { credits: 0, planId: null });
    const { error, response } = await app.client(org.key).POST('/calls', {
      body: { agent_id: other.agentId, to_e164: testNumber('7777') },
    });
    expect(response.status).toBe(404);
    expect(error!.error).toMatchObject({ code: 'not_found', param: 'agent_id' });
    await expectNothingWritten(org.orgId, 0);
  });

  it('an unknown agent is not_found (param agent_id)', async () => {
    const org = await createTestOrg(database.db);
    const { error, response } = await app.client(org.key).POST('/calls', {
      body: { agent_id: '3f2b8c1e-5d4a-4e6f-9a7b-1c2d3e4f5a6b', to_e164: testNumber('7777') },
    });
    expect(response.status).toBe(404);
    expect(error!.error).toMatchObject({ code: 'not_found', param: 'agent_id' });
  });

  it('an org without an active plan is forbidden, before the credit check', async () => {
    const org = await createTestOrg(database.db, { credits: 0, planId: null });
    const { error, response } = await app.client(org.key).POST('/calls', {
      body: { agent_id: org.agentId, to_e164: testNumber('7777') },
    });
    expect(response.status).toBe(403);
    expect(error!.error.code).toBe('forbidden');
    await expectNothingWritten(org.orgId, 0);
  });

  it('credits below the hold are insufficient_credits, saying what is needed and available', async () => {
    const org = await createTestOrg(database.db, { credits: HOLD - 1 });
    const { error, response } = await app.client(org.key).POST('/calls', {
      body: { agent_id: org.agentId, to_e164: testNumber('0005') },
    });
    expect(response.status).toBe(402);
    expect(error!.error.code).toBe('insufficient_credits');
    expect(error!.error.message).toBe(
      `This call needs a hold of ${HOLD} paise but only ${HOLD - 1} paise are available.`,
    );
    await expectNothingWritten(org.orgId, HOLD - 1);
  });

  it('credits equal to the hold are enough; the hold is a ledger row and the balance drops to 0', async () => {
    const org = await createTestOrg(database.db, { credits: HOLD });
    const { data, response } = await app.client(org.key).POST('/calls', {
      body: { agent_id: org.agentId, to_e164: testNumber('7777') },
    });
    expect(response.status).toBe(201);
    expect(await ledgerOfCall(database.db, data!.data.id)).toEqual([{ kind: 'hold', amount_paise: -HOLD }]);
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 0, ledgerSum: 0 });
  });

  it('the hold rounds max_duration_sec up to whole minutes', async () => {
    const org = await createTestOrg(database.db, { credits: 10_000, agent: { ratePaisePerMinute: 150 } });
    const { data } = await app.client(org.key).POST('/calls', {
      body: { agent_id: org.agentId, to_e164: testNumber('7777'), max_duration_sec: 61 },
    });
    expect(await ledgerOfCall(database.db, data!.data.id)).toEqual([{ kind: 'hold', amount_paise: -300 }]);
  });
});

describe('after placement', () => {
  it('the call is due for progress only at its first scripted step, not at once', async () => {
    // One simulated second is 5 ms here (startTestApp); every script's first step comes after 1 s.
    const org = await createTestOrg(database.db);
    const { data } = await app.client(org.key).POST('/calls', {
      body: { agent_id: org.agentId, to_e164: testNumber('7777') },
    });
    const row = await database.db
      .selectFrom('calls')
      .select(['created_at', 'next_step_at'])
      .where('id', '=', data!.data.id)
      .executeTakeFirstOrThrow();
    expect(row.next_step_at!.getTime() - row.created_at.getTime()).toBe(5);
  });
});

describe('concurrent placements', () => {
  it('50 at once with credits for exactly 10: 10 accepted, 40 insufficient_credits, never overdrawn', async () => {
    const org = await createTestOrg(database.db, { credits: 10 * HOLD });
    const client = app.client(org.key);
    let sampling = true;
    const samples: number[] = [];
    const sampler = (async () => {
      while (sampling) {
        samples.push((await balanceAndLedgerSum(database.db, org.orgId)).balance);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () =>
        client.POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('7777') } }),
      ),
    );
    sampling = false;
    await sampler;

    const statuses = responses.map((r) => r.response.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 402)).toHaveLength(40);
    for (const r of responses.filter((r) => r.response.status === 402)) {
      expect(r.error!.error.code).toBe('insufficient_credits');
    }
    expect(samples.length).toBeGreaterThan(0);
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 0, ledgerSum: 0 });
    expect(await countCallRows(database.db, org.orgId)).toBe(10);
    const holds = await database.db
      .selectFrom('credit_ledger')
      .select('amount_paise')
      .where('org_id', '=', org.orgId)
      .where('kind', '=', 'hold')
      .execute();
    expect(holds).toHaveLength(10);
    const list = await client.GET('/calls', { params: { query: { status: 'queued' } } });
    expect(list.data!.pagination.total).toBe(10);
  });
});
