// A wait on the database past its deadline because this process was busy (its event loop blocked, as on
// a starved machine) still takes the answer that arrived meanwhile: neither a query nor the readiness
// probe reports a database that did answer as silent.
import pg from 'pg';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { withDeadline } from '../src/database/deadline.js';
import { DatabaseProbe } from '../src/database/probe.js';

const DEADLINE_MS = 50;
/** How long the process is kept busy: far past the deadline, and long enough for PostgreSQL to answer. */
const BUSY_MS = 2_000;

/**
 * Waits for the event loop's check phase: after it the loop runs its due timers before it reads its
 * sockets, the order in which a deadline's timer would beat an answer that came while the process was busy.
 */
function untilCheckPhase(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Keeps this process's event loop busy for `ms`, as a CPU-starved or overloaded process would be. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

let client: pg.Client;

beforeAll(async () => {
  client = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await client.connect();
});

afterAll(async () => {
  await client?.end();
});

it('resolves with an answer that arrived while the process was too busy to read it before the deadline', async () => {
  await untilCheckPhase();
  const answer = withDeadline(client.query<{ one: number }>('SELECT 1 AS one'), DEADLINE_MS, () => new Error('late'));
  busyFor(BUSY_MS);
  expect((await answer).rows).toEqual([{ one: 1 }]);
});

it('still rejects when no answer came by the deadline', async () => {
  const silent = new Promise<never>(() => undefined);
  await expect(withDeadline(silent, DEADLINE_MS, () => new Error('no answer in time'))).rejects.toThrow(
    'no answer in time',
  );
});

it('keeps the readiness probe from reporting a database that answered as down', async () => {
  const probe = new DatabaseProbe(inject('adminDatabaseUrl'), DEADLINE_MS * 4);
  try {
    // The first check connects; the second, past the cached answer's life, only queries.
    expect(await probe.check()).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 600));
    await untilCheckPhase();
    const answered = probe.check();
    busyFor(BUSY_MS);
    expect(await answered).toBe(true);
  } finally {
    await probe.close();
  }
});
