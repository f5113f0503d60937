// Progress lives in the database: calls in flight when the app stops carry on when a new app starts on
// the same database, and two apps working side by side never apply a step twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';

// Slow enough that calls are still in flight when the first app has stopped, on a busy machine too.
const STEP_MS = 100;
const ENDINGS = ['7777', '0001', '0002', '0003', '0004', '1234', '4321', '8888', '6006', '9999', '0010', '5555'];

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

async function statusesOf(orgId: string) {
  const rows = await database.db.selectFrom('calls').select(['id', 'status']).where('org_id', '=', orgId).execute();
  return new Map(rows.map((row) => [row.id, row.status]));
}

const TERMINAL = new Set(['completed', 'failed', 'no_answer', 'busy', 'canceled']);

describe('restart in the middle of calls', () => {
  it('every call in flight reaches a terminal status after a restart, with one event and a settled ledger each', async () => {
    const first = await startTestApp(database, { config: { simulatorStepMs: STEP_MS } });
    const org = await createTestOrg(database.db, { credits: 100_000, planId: 'scale' });
    const client = first.client(org.key);
    for (const ending of ENDINGS) {
      const { response } = await client.POST('/calls', {
        body: { agent_id: org.agentId, to_e164: testNumber(ending) },
      });
      expect(response.status).toBe(201);
    }
    await waitFor('a call to be connected', async () =>
      [...(await statusesOf(org.orgId)).values()].includes('in_progress'),
    );
    await first.close();

    const atStop = await statusesOf(org.orgId);
    const inFlight = [...atStop].filter(([, status]) => !TERMINAL.has(status));
    expect(inFlight.length).toBeGreaterThan(0);

    // Two apps on the same database, as two processes would be.
    const second = await startTestApp(database, { config: { simulatorStepMs: STEP_MS } });
    const third = await startTestApp(database, { config: { simulatorStepMs: STEP_MS } });
    try {
      const final = await waitFor('every call to end', async () => {
        const statuses = await statusesOf(org.orgId);
        return [...statuses.values()].every((status) => TERMINAL.has(status)) ? statuses : null;
      });
      expect(final.size).toBe(ENDINGS.length);

      const events = await database.db
        .selectFrom('events')
        .select([sql<string>`data->>'call_id'`.as('call_id'), 'kind'])
        .where('org_id', '=', org.orgId)
        .execute();
      expect(events).toHaveLength(ENDINGS.length);
      for (const [id, status] of final) {
        expect(events.filter((event) => event.call_id === id).map((event) => event.kind)).toEqual([`call.${status}`]);
      }

      const ledger = await database.db
        .selectFrom('credit_ledger')
        .select(['call_id', 'kind'])
        .where('org_id', '=', org.orgId)
        .where('call_id', 'is not', null)
        .execute();
      for (const id of final.keys()) {
        const kinds = ledger.filter((row) => row.call_id === id).map((row) => row.kind);
        expect(kinds.slice(0, 2)).toEqual(['hold', 'release']);
        expect(kinds.length).toBeLessThanOrEqual(3);
      }
      const charged = await database.db
        .selectFrom('calls')
        .select(sql<number>`sum(credits_debited_paise)`.as('sum'))
        .where('org_id', '=', org.orgId)
        .executeTakeFirstOrThrow();
      const money = await balanceAndLedgerSum(database.db, org.orgId);
      expect(money.balance).toBe(100_000 - Number(charged.sum));
      expect(money.ledgerSum).toBe(money.balance);

      // The counters behind `total` agree with the rows.
      const { data } = await second.client(org.key).GET('/calls', {});
      expect(data!.pagination.total).toBe(ENDINGS.length);
      for (const status of new Set(final.values())) {
        const page = await second.client(org.key).GET('/calls', { params: { query: { status } } });
        expect(page.data!.pagination.total).toBe([...final.values()].filter((s) => s === status).length);
      }
      for (const status of ['queued', 'dialing', 'ringing', 'in_progress'] as const) {
        const page = await second.client(org.key).GET('/calls', { params: { query: { status } } });
        expect(page.data!.pagination.total).toBe(0);
      }
    } finally {
      await second.close();
      await third.close();
    }
  });
});
