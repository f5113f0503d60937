// An org's placements held up at its balance row (another transaction has it) leave a process's pool
// to other orgs: at most DB_POOL_SIZE - FIRST_STEP_SPARE_CONNECTIONS of the org's first steps (the
// statement or transaction that takes the hold) wait in pool connections, the rest wait their turn in
// the service. So another org's placement goes through while the burst waits, with or without an
// Idempotency-Key, on a plan with or without a concurrency cap; and once the row is free every
// placement gets its own call and hold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { randomUUID } from 'node:crypto';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createPlan } from '../src/orgs/service.js';
import { FIRST_STEP_SPARE_CONNECTIONS } from '../src/calls/policy.js';

/** A default agent's hold: 600 s at 200 paise a minute. */
const HOLD = 2_000;
const PLACEMENTS = 12;
const POOL_SIZE = 6;
/** The org's first steps the cap lets wait in pool connections. */
const CAP = POOL_SIZE - FIRST_STEP_SPARE_CONNECTIONS;

let database: TestDatabase;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  await createPlan(database.db, { id: 'capped', name: 'Capped', rateLimitPerMinute: 1_000, maxConcurrentCalls: 100 });
  // Calls stay queued: their steps are an hour long.
  app = await startTestApp(database, { config: { simulatorStepMs: 3_600_000, dbPoolSize: POOL_SIZE } });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Places a call for `org` to a number the simulator takes; returns the HTTP status and the call's id. */
async function place(org: TestOrg, key?: string): Promise<{ status: number; id?: string }> {
  const answered = await app.client(org.key).POST('/calls', {
    body: { agent_id: org.agentId, to_e164: testNumber('0000') },
    ...(key === undefined ? {} : { params: { header: { 'Idempotency-Key': key } } }),
  });
  return { status: answered.response.status, id: answered.data?.data.id };
}

/** How many statements wait for a lock now. */
async function statementsWaiting(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(database.db);
  return rows[0]!.n;
}

/**
 * Holds the org's row in another session while PLACEMENTS placements of the org are made with
 * `placeOne`; meanwhile samples how many statements wait for a lock and places a call for `other`.
 * Then releases the row; returns the most statements seen waiting and every answer.
 */
async function burstAtHeldRow(org: TestOrg, other: TestOrg, placeOne: () => Promise<{ status: number; id?: string }>) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = database.db.transaction().execute(async (trx) => {
    await sql`SELECT 1 FROM orgs WHERE id = ${org.orgId} FOR UPDATE`.execute(trx);
    locked();
    await released;
  });
  await isLocked;

  const answers = Promise.all(Array.from({ length: PLACEMENTS }, placeOne));
  // However long the row stays taken, the org's placements the cap lets in wait for it, and no more.
  await waitFor('the capped first steps waiting for the row', async () => (await statementsWaiting()) >= CAP);
  const otherAnswer = await place(other);
  const samples: number[] = [];
  for (let sample = 0; sample < 20; sample += 1) {
    samples.push(await statementsWaiting());
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  release();
  await holder;
  return { mostWaiting: Math.max(...samples), otherStatus: otherAnswer.status, placed: await answers };
}

/** Checks that every placement got its own queued call with its hold, and the org's balance moved by them. */
async function expectPlacedWithHolds(org: TestOrg, placed: Array<{ status: number; id?: string }>, credits: number) {
  expect(placed.map((answer) => answer.status)).toEqual(Array(PLACEMENTS).fill(201));
  const ids = placed.map((answer) => answer.id!);
  expect(new Set(ids).size).toBe(PLACEMENTS);
  const orgRow = await database.db
    .selectFrom('orgs')
    .select(['balance_paise', 'held_paise'])
    .where('id', '=', org.orgId)
    .executeTakeFirstOrThrow();
  expect(orgRow).toEqual({ balance_paise: credits - PLACEMENTS * HOLD, held_paise: PLACEMENTS * HOLD });
  const holds = await database.db
    .selectFrom('credit_ledger')
    .select(['call_id', 'amount_paise'])
    .where('org_id', '=', org.orgId)
    .where('kind', '=', 'hold')
    .execute();
  expect(holds.map((hold) => hold.call_id).sort()).toEqual([...ids].sort());
  expect(holds.every((hold) => hold.amount_paise === -HOLD)).toBe(true);
  const calls = await database.db.selectFrom('calls').select(['status', 'hold_paise']).where('id', 'in', ids).execute();
  expect(calls).toHaveLength(PLACEMENTS);
  expect(calls.every((call) => call.status === 'queued' && call.hold_paise === HOLD)).toBe(true);
}

describe("an org's placements held up at its balance row", () => {
  it.each([
    ['without a key, on a plan without a cap', 'scale', false],
    ['with Idempotency-Keys', 'scale', true],
    ['on a plan with a concurrency cap', 'capped', false],
  ])('%s leave the spare connections to other orgs', async (_, planId, keyed) => {
    const org = await createTestOrg(database.db, { credits: 100 * HOLD, planId });
    const other = await createTestOrg(database.db, { credits: 10 * HOLD, planId });
    const burst = await burstAtHeldRow(org, other, () => place(org, keyed ? randomUUID() : undefined));
    expect(burst.mostWaiting).toBe(CAP);
    expect(burst.otherStatus).toBe(201);
    await expectPlacedWithHolds(org, burst.placed, 100 * HOLD);
  });
});
