// Idempotency-Key on POST /calls over HTTP: replay, conflict, concurrent duplicates, scope and expiry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, startTestApp, type TestApp } from './support/app.js';
import { countCallRows, testNumber, waitForCall } from './support/calls.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';
import { addCredits } from '../src/orgs/service.js';

const HOLD = 2000;

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

async function holdCount(orgId: string): Promise<number> {
  const rows = await database.db
    .selectFrom('credit_ledger')
    .select('id')
    .where('org_id', '=', orgId)
    .where('kind', '=', 'hold')
    .execute();
  return rows.length;
}

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and body, with Idempotent-Replayed, and places no second call', async () => {
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const body = { agent_id: org.agentId, to_e164: testNumber('0001'), metadata: { a: 1, b: 'two' } };
    const first = await client.POST('/calls', { body, headers: { 'Idempotency-Key': 'retry-me' } });
    expect(first.response.status).toBe(201);
    expect(first.response.headers.get('Idempotent-Replayed')).toBeNull();
    // Let the call end so a replay shows the response as first sent, not the call's current state.
    await waitForCall(database.db, client, first.data!.data.id);

    const reordered = { metadata: { b: 'two', a: 1 }, to_e164: body.to_e164, agent_id: body.agent_id };
    const second = await client.POST('/calls', { body: reordered, headers: { 'Idempotency-Key': 'retry-me' } });
    expect(second.response.status).toBe(201);
    expect(second.response.headers.get('Idempotent-Replayed')).toBe('true');
    expect(second.data).toEqual(first.data);
    expect(second.data!.data.status).toBe('queued');
    expect(await countCallRows(database.db, org.orgId)).toBe(1);
    expect(await holdCount(org.orgId)).toBe(1);
  });

  it('refuses the same key with a different body: 409 idempotency_conflict, nothing placed', async () => {
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const to = testNumber('7777');
    await client.POST('/calls', { body: { agent_id: org.agentId, to_e164: to }, headers: { 'Idempotency-Key': 'k' } });
    const { error, response } = await client.POST('/calls', {
      body: { agent_id: org.agentId, to_e164: to, max_duration_sec: 60 },
      headers: { 'Idempotency-Key': 'k' },
    });
    expect(response.status).toBe(409);
    expect(error!.error).toMatchObject({ code: 'idempotency_conflict', param: 'Idempotency-Key' });
    expect(await countCallRows(database.db, org.orgId)).toBe(1);
    expect(await holdCount(org.orgId)).toBe(1);
  });

  it('20 concurrent requests with one key create exactly one call and one hold', async () => {
    const org = await createTestOrg(database.db);
    const client = app.client(org.key);
    const body = { agent_id: org.agentId, to_e164: testNumber('7777') };
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => client.POST('/calls', { body, headers: { 'Idempotency-Key': 'burst' } })),
    );
    expect(responses.map((r) => r.response.status)).toEqual(Array(20).fill(201));
    const ids = new Set(responses.map((r) => r.data!.data.id));
    expect(ids.size).toBe(1);
    const replayed = responses.filter((r) => r.response.headers.get('Idempotent-Replayed') === 'true');
    expect(replayed).toHaveLength(19);
    expect(await countCallRows(database.db, org.orgId)).toBe(1);
    expect(await holdCount(org.orgId)).toBe(1);
  });

  it('keys are scoped per org', async () => {
    const a = await createTestOrg(database.db);
    const b = await createTestOrg(database.db);
    const first = await app.client(a.key).POST('/calls', {
      body: { agent_id: a.agentId, to_e164: '+919876512345' },
      headers: { 'Idempotency-Key': 'shared' },
    });
    const second = await app.client(b.key).POST('/calls', {
      body: { agent_id: b.agentId, to_e164: '+919876512345' },
      headers: { 'Idempotency-Key': 'shared' },
    });
    expect(second.response.status).toBe(201);
    expect(second.response.headers.get('Idempotent-Replayed')).toBeNull();
    expect(second.data!.data.id).not.toBe(first.data!.data.id);
  });

  it('does not store failed requests: after a 402 the same key runs again', async () => {
    const org = await createTestOrg(database.db, { credits: HOLD - 1 });
    const client = app.client(org.key);
    const body = { agent_id: org.agentId, to_e164: testNumber('7777') };
    const refused = await client.POST('/calls', { body, headers: { 'Idempotency-Key': 'after-top-up' } });
    expect(refused.response.status).toBe(402);
    await addCredits(database.db, org.orgId, 1);
    const accepted = await client.POST('/calls', { body, headers: { 'Idempotency-Key': 'after-top-up' } });
    expect(accepted.response.status).toBe(201);
    expect(accepted.response.headers.get('Idempotent-Replayed')).toBeNull();
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({ balance: 0, ledgerSum: 0 });
  });
});

describe('Idempotency-Key expiry', () => {
  it('forgets a key after 24 hours', async () => {
    const clock = new ManualClock();
    const timed = await startTestApp(database, { clock, workers: false });
    try {
      const org = await createTestOrg(database.db);
      const client = timed.client(org.key);
      const body = { agent_id: org.agentId, to_e164: testNumber('7777') };
      const first = await client.POST('/calls', { body, headers: { 'Idempotency-Key': 'daily' } });
      clock.advance(24 * 60 * 60 * 1000 - 1000);
      const within = await client.POST('/calls', { body, headers: { 'Idempotency-Key': 'daily' } });
      expect(within.response.headers.get('Idempotent-Replayed')).toBe('true');
      expect(within.data!.data.id).toBe(first.data!.data.id);

      clock.advance(2000);
      const changed = { ...body, max_duration_sec: 60 };
      const after = await client.POST('/calls', { body: changed, headers: { 'Idempotency-Key': 'daily' } });
      expect(after.response.status).toBe(201);
      expect(after.response.headers.get('Idempotent-Replayed')).toBeNull();
      expect(after.data!.data.id).not.toBe(first.data!.data.id);
      const again = await client.POST('/calls', { body: changed, headers: { 'Idempotency-Key': 'daily' } });
      expect(again.data!.data.id).toBe(after.data!.data.id);
      expect(await countCallRows(database.db, org.orgId)).toBe(2);
    } finally {
      await timed.close();
    }
  });
});
