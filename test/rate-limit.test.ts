// The rate limit under concurrency: one instance takes the slots of an org's concurrent requests in
// batches (fewer database calls than requests) and still grants exactly the limit; a busy org with a
// high limit takes most slots from reservations, gives back what they leave unused, and is never granted
// more than its limit across instances.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { connectDatabase } from '../src/database/connect.js';
import { createPlan, setPlan } from '../src/orgs/service.js';
import { RATE_LIMIT_RESERVATION_MS } from '../src/orgs/policy.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp } from './support/app.js';
import type { ErrorResponse } from './support/json.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

/** A Kysely over the test database that counts its rate_limit_take calls. */
function countingDb(): { db: Kysely<Database>; takes: () => number } {
  let takes = 0;
  const { pool } = connectDatabase(database.url, { poolSize: 10 });
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.query.sql.includes('rate_limit_take')) takes += 1;
    },
  });
  return { db, takes: () => takes };
}

/**
 * A Kysely over the test database whose calls that only give reserved slots back (no slot asked for)
 * reach the server `delayMs` late; counts those calls.
 */
function slowGiveBackDb(delayMs: number): { db: Kysely<Database>; giveBacks: () => number } {
  let giveBacks = 0;
  const { pool } = connectDatabase(database.url, { poolSize: 10 });
  pool.on('connect', (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const [text, values] = args as [unknown, unknown[] | undefined];
      const givesBackOnly =
        typeof text === 'string' && text.includes('rate_limit_take') && values?.[3] === 0 && Number(values[6]) > 0;
      if (!givesBackOnly) return query(...args);
      giveBacks += 1;
      return sleep(delayMs).then(() => query(...args));
    };
  });
  return { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }), giveBacks: () => giveBacks };
}

/** A new org on a plan of `perMinute` requests a minute. */
async function orgWithLimit(perMinute: number) {
  const org = await createTestOrg(database.db);
  const planId = `limit-${perMinute}-${Math.random().toString(36).slice(2, 8)}`;
  await createPlan(database.db, { id: planId, name: `${perMinute} a minute`, rateLimitPerMinute: perMinute });
  await setPlan(database.db, org.orgId, planId);
  return org;
}

/** The hits the database counts in the org's window. */
async function countedHits(orgId: string): Promise<number> {
  const { rows } = await sql<{ hits: number }>`
    SELECT coalesce(sum(hits), 0)::int AS hits FROM rate_limit_buckets WHERE org_id = ${orgId}`.execute(database.db);
  return rows[0]!.hits;
}

/** `rounds` waves of `concurrency` requests at once, spread over `apps` in turn; the statuses and remaining counts. */
async function waves(apps: TestApp[], key: string, rounds: number, concurrency: number) {
  const answers: Array<{ status: number; remaining: number }> = [];
  for (let round = 0; round < rounds; round += 1) {
    const wave = await Promise.all(
      Array.from({ length: concurrency }, (_, i) =>
        rawRequest(apps[(round * concurrency + i) % apps.length]!, 'GET', '/contacts?limit=1', {
          headers: { Authorization: `Bearer ${key}` },
        }),
      ),
    );
    answers.push(...wave.map((r) => ({ status: r.status, remaining: Number(r.headers.get('x-ratelimit-remaining')) })));
  }
  return answers;
}

it('grants exactly 120 of 130 concurrent requests, each with its own remaining count, in fewer calls', async () => {
  const org = await createTestOrg(database.db);
  const { db: counted, takes } = countingDb();
  const app = await startTestApp({ db: counted, url: database.url }, { workers: false });
  try {
    const headers = { Authorization: `Bearer ${org.key}` };
    const started = Date.now();
    const responses = await Promise.all(
      Array.from({ length: 130 }, () => rawRequest<ErrorResponse>(app, 'GET', '/contacts?limit=1', { headers })),
    );
    const finished = Date.now();
    // A hit counts for exactly 60 s, and every hit of the burst fell between `started` and `finished`:
    // one more request fits again between 60 s after `started` and 60 s after the refusal.
    const earliestFit = started + 60_000;
    const granted = responses.filter((response) => response.status === 200);
    const refused = responses.filter((response) => response.status === 429);
    expect(granted).toHaveLength(120);
    expect(refused).toHaveLength(10);
    const remaining = granted.map((response) => Number(response.headers.get('x-ratelimit-remaining')));
    expect(remaining.sort((a, b) => a - b)).toEqual(Array.from({ length: 120 }, (_, i) => i));
    for (const response of refused) {
      expect(response.body.error.code).toBe('too_many_requests');
      expect(response.headers.get('x-ratelimit-remaining')).toBe('0');
      const retryAfter = Number(response.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(Math.ceil((earliestFit - finished) / 1000));
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    expect(takes()).toBeLessThan(130);
    // 120 a minute is too few to reserve slots ahead: every granted request was counted when it came.
    await sleep(RATE_LIMIT_RESERVATION_MS + 200);
    expect(await countedHits(org.orgId)).toBe(120);
  } finally {
    await app.close();
    await counted.destroy();
  }
});

it('lets a busy org take most slots from reservations and gives back what they leave unused', async () => {
  const org = await orgWithLimit(60_000);
  const { db: counted, takes } = countingDb();
  const app = await startTestApp({ db: counted, url: database.url }, { workers: false });
  try {
    const answers = await waves([app], org.key, 40, 10);
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    // Each granted request reports its own place in the window, whether it came from a batch or a reservation.
    const remaining = answers.map((answer) => answer.remaining).sort((a, b) => b - a);
    expect(new Set(remaining).size).toBe(400);
    expect(remaining[0]).toBeLessThan(60_000);
    // Without reservations this takes a call per wave or more; with them, most waves need none, so
    // there are fewer calls than waves even on a crowded machine.
    expect(takes()).toBeLessThan(40);
    // Once the last reservation lapses, its unused slots are given back: the window counts exactly the requests made.
    await expect.poll(() => countedHits(org.orgId), { timeout: 15_000, interval: 100 }).toBe(400);
  } finally {
    await app.close();
    await counted.destroy();
  }
});

it('counts a request that comes while lapsed slots are being given back after them, so remaining counts never repeat', async () => {
  const org = await orgWithLimit(60_000);
  const { db: slow, giveBacks } = slowGiveBackDb(2_000);
  const app = await startTestApp({ db: slow, url: database.url }, { workers: false });
  try {
    // A wave's last call reserves slots ahead; once they lapse (a quarter second later), those nothing
    // used are given back in a call held for two seconds here. A wave whose requests happened to use up
    // that reservation leaves nothing to give back, so waves come until a give-back call is out.
    const first: Awaited<ReturnType<typeof waves>> = [];
    for (let attempt = 1; giveBacks() === 0; attempt += 1) {
      expect(attempt).toBeLessThanOrEqual(10);
      first.push(...(await waves([app], org.key, 1, 10)));
      const until = Date.now() + 1_000;
      while (giveBacks() === 0 && Date.now() < until) await sleep(10);
    }
    // The next wave comes while that call is still out.
    const second = await waves([app], org.key, 1, 5);
    const answers = [...first, ...second];
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const remaining = answers.map((answer) => answer.remaining).sort((a, b) => b - a);
    expect(remaining).toEqual(Array.from({ length: answers.length }, (_, i) => 60_000 - 1 - i));
    await expect.poll(() => countedHits(org.orgId), { timeout: 15_000, interval: 100 }).toBe(answers.length);
  } finally {
    await app.close();
    await slow.destroy();
  }
});

it('never grants more than the limit across two instances that reserve ahead', async () => {
  // 480 a minute: each instance may reserve 2 slots ahead.
  const org = await orgWithLimit(480);
  const apps = [await startTestApp(database, { workers: false }), await startTestApp(database, { workers: false })];
  try {
    const answers = await waves(apps, org.key, 25, 20);
    const granted = answers.filter((answer) => answer.status === 200).length;
    expect(granted).toBeLessThanOrEqual(480);
    // Slots another instance holds ahead may refuse a request early, at most one reservation's worth each.
    expect(granted).toBeGreaterThanOrEqual(480 - 2 * 2);
    expect(answers.filter((answer) => answer.status === 429)).toHaveLength(500 - granted);
    await expect.poll(() => countedHits(org.orgId), { timeout: 15_000, interval: 100 }).toBe(granted);
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
});
