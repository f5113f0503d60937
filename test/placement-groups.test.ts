// Placements of one org made at the same moment (POST /calls without an Idempotency-Key, on a plan
// without a concurrency cap) take the org's balance row together: while one statement stores some of
// them with their holds, the rest wait in the service and then go as one statement, so the row is
// never queued for by one statement (and pool connection) per placement. Every placement still gets
// its own call and hold, and other orgs never wait for the group.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';

/** A default agent's hold: 600 s at 200 paise a minute. */
const HOLD = 2_000;
const PLACEMENTS = 12;

let database: TestDatabase;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  // Calls stay queued: their steps are an hour long.
  app = await startTestApp(database, { config: { simulatorStepMs: 3_600_000 } });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Places a call for `org` to a number the simulator takes; returns the HTTP status and the call's id. */
async function place(org: TestOrg): Promise<{ status: number; id?: string }> {
  const answered = await app.client(org.key).POST('/calls', {
    body: { agent_id: org.agentId, to_e164: testNumber('0000') },
  });
  return { status: answered.response.status, id: answered.data?.data.id };
}

/** How many statements storing placements wait for a lock now. */
async function placementsWaiting(): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM pg_stat_activity
    WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%insert into "call_placements"%'`.execute(
    database.db,
  );
  return rows[0]!.n;
}

describe('placements of one org at the same moment', () => {
  it('queue for its balance row as one statement, and each is stored with its own hold', async () => {
    const org = await createTestOrg(database.db, { credits: 100 * HOLD, planId: 'scale' });
    const other = await createTestOrg(database.db, { credits: 10 * HOLD, planId: 'scale' });

    // Another session holds the org's row, as a long statement of the org's own would.
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

    const answers = Promise.all(Array.from({ length: PLACEMENTS }, () => place(org)));
    await waitFor('the first placement waiting for the row', async () => (await placementsWaiting()) >= 1);
    // The other org's placement is not held up by the group waiting.
    expect((await place(other)).status).toBe(201);
    // However long the row stays taken, one statement waits for it; the other placements wait in the service.
    const samples: number[] = [];
    for (let sample = 0; sample < 20; sample += 1) {
      samples.push(await placementsWaiting());
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(Math.max(...samples)).toBe(1);

    release();
    await holder;
    const placed = await answers;
    expect(placed.map((answer) => answer.status)).toEqual(Array(PLACEMENTS).fill(201));
    const ids = placed.map((answer) => answer.id!);
    expect(new Set(ids).size).toBe(PLACEMENTS);

    const orgRow = await database.db
      .selectFrom('orgs')
      .select(['balance_paise', 'held_paise'])
      .where('id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    expect(orgRow).toEqual({ balance_paise: (100 - PLACEMENTS) * HOLD, held_paise: PLACEMENTS * HOLD });
    const holds = await database.db
      .selectFrom('credit_ledger')
      .select(['call_id', 'amount_paise'])
      .where('org_id', '=', org.orgId)
      .where('kind', '=', 'hold')
      .execute();
    expect(holds.map((hold) => hold.call_id).sort()).toEqual([...ids].sort());
    expect(holds.every((hold) => hold.amount_paise === -HOLD)).toBe(true);
    const calls = await database.db
      .selectFrom('calls')
      .select(['id', 'status', 'hold_paise'])
      .where('id', 'in', ids)
      .execute();
    expect(calls).toHaveLength(PLACEMENTS);
    expect(calls.every((call) => call.status === 'queued' && call.hold_paise === HOLD)).toBe(true);
  });
});
