// The rate limit under concurrency: one instance takes the slots of an org's concurrent requests in
// batches (fewer database calls than requests) and still grants exactly the limit.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../db/schema.js';
import { connectDatabase } from '../src/database/connect.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp } from './support/app.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

it('grants exactly 120 of 130 concurrent requests, each with its own remaining count, in fewer calls', async () => {
  const org = await createTestOrg(database.db);
  let takes = 0;
  const { pool } = connectDatabase(database.url, { poolSize: 10 });
  const counted = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.query.sql.includes('rate_limit_take')) takes += 1;
    },
  });
  const app = await startTestApp({ db: counted, url: database.url }, { workers: false });
  try {
    const headers = { Authorization: `Bearer ${org.key}` };
    const started = Date.now();
    const responses = await Promise.all(
      Array.from({ length: 130 }, () => rawRequest(app, 'GET', '/contacts?limit=1', { headers })),
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
    expect(takes).toBeLessThan(130);
  } finally {
    await app.close();
    await counted.destroy();
  }
});
