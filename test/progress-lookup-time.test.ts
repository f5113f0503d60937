// Time passes while the progress worker looks a call up. A simulator call whose next step falls due
// during its own lookup is due again at once, at that step's time; it is put off with a lease only when
// it is to be hung up at its deadline after the commit. (A lease there once kept such calls, and the
// campaign that placed them, waiting some twenty seconds.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../src/clock.js';
import { advanceDueCalls } from '../src/calls/progress-worker.js';
import { LookupGate } from '../src/calls/lookup-gate.js';
import { planCall } from '../src/calls/provider/simulator/script.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp } from './support/app.js';
import { testNumber } from './support/calls.js';

const STEP_MS = 1_000;

/** A clock that moves on by `tickMs` each time it is read, as time passes during the worker's step. */
class TickingClock implements Clock {
  tickMs = 0;
  constructor(private current: number) {}
  now(): Date {
    const at = new Date(this.current);
    this.current += this.tickMs;
    return at;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

let database: TestDatabase;
let app: TestApp;
const clock = new TickingClock(Date.now());

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { clock, workers: false, config: { simulatorStepMs: STEP_MS } });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('a step that falls due while its call is looked up', () => {
  it('is looked at again at its own time, not after a lease', async () => {
    const org = await createTestOrg(database.db);
    const to = testNumber('7777');
    const { data } = await app.client(org.key).POST('/calls', { body: { agent_id: org.agentId, to_e164: to } });
    const placed = data!.data;
    const placedAt = Date.parse(placed.created_at);
    const steps = planCall(to, '').steps.map(({ offsetSec }) => offsetSec);

    // Due at the first step; each read of the clock in the worker's step is two steps later than the one before.
    clock.set(placedAt + steps[0]! * STEP_MS);
    clock.tickMs = 2 * STEP_MS;
    try {
      expect(await advanceDueCalls(app.deps, new LookupGate(app.deps.metrics))).toBe(true);
    } finally {
      clock.tickMs = 0;
    }

    const row = await database.db
      .selectFrom('calls')
      .select(['status', 'next_step_at'])
      .where('id', '=', placed.id)
      .executeTakeFirstOrThrow();
    // Moved on by the lookup, and next looked at when a step of its script is due: one that came due
    // while the step ran, so at once.
    expect(row.status).not.toBe('queued');
    const stepTimes = steps.map((offsetSec) => new Date(placedAt + offsetSec * STEP_MS).toISOString());
    expect(stepTimes).toContain(row.next_step_at?.toISOString());
    expect(row.next_step_at!.getTime()).toBeLessThanOrEqual(clock.now().getTime());
  });
});
