// Two batches of provider reports that name the same calls in different orders never deadlock: each
// batch takes its provider call ids' locks in one statement, in sorted order, as a placement group does.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ingestReports } from '../src/calls/provider-events.js';
import { lockProviderCallIds } from '../src/calls/provider-event-queries.js';
import pino from 'pino';
import { simulatorProvider } from '../src/calls/provider/simulator/index.js';
import type { InboundEvent } from '../src/calls/provider/types.js';
import { loadConfig } from '../src/config.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { waitFor } from './support/calls.js';

let database: TestDatabase;
const provider = simulatorProvider.create(loadConfig({}), { logger: pino({ enabled: false }) })!;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

function ringing(providerCallId: string, batch: string): InboundEvent {
  return {
    dedupeKey: `${batch}:${providerCallId}`,
    callId: null,
    providerCallId,
    event: { type: 'status', at: new Date(), status: 'ringing' },
  };
}

async function waitingOnLocks(): Promise<number> {
  const { rows } = await sql<{ count: string }>`SELECT count(*) AS count FROM pg_locks
    WHERE locktype = 'advisory' AND NOT granted`.execute(database.db);
  return Number(rows[0]!.count);
}

function ingest(events: InboundEvent[]) {
  return database.db
    .transaction()
    .execute((trx) => ingestReports(trx, provider, events, { now: new Date(), cause: null, cutAtDeadline: false }));
}

it('lets two batches naming calls in opposite orders both finish, without a deadlock', async () => {
  // The third call's lock is held here while the first batch takes what it can and the second queues.
  let release = () => {};
  let locked = () => {};
  const holding = new Promise<void>((resolve) => (locked = resolve));
  const holder = database.db.transaction().execute(async (trx) => {
    await lockProviderCallIds(trx, provider.name, ['call-c']);
    locked();
    await new Promise<void>((resolve) => (release = resolve));
  });
  await holding;
  const first = ingest(['call-a', 'call-c', 'call-b'].map((id) => ringing(id, 'first')));
  await waitFor('the first batch to wait', async () => (await waitingOnLocks()) === 1);
  const second = ingest(['call-b', 'call-a'].map((id) => ringing(id, 'second')));
  await waitFor('the second batch to wait', async () => (await waitingOnLocks()) === 2);
  release();
  await holder;
  const results = await Promise.allSettled([first, second]);
  expect(
    results.map((result) => (result.status === 'fulfilled' ? result.value.results : String(result.reason))),
  ).toEqual([
    ['unknown_call', 'unknown_call', 'unknown_call'],
    ['unknown_call', 'unknown_call'],
  ]);
});
