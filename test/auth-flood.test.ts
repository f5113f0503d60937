// Unauthenticated traffic is bounded: a flood of made-up keys from one address gets 429 once the address
// has used up its failed authentications, costing the database at most one lookup per allowed failure;
// X-Forwarded-For counts only behind a trusted proxy; valid keys keep working; unknown keys are
// remembered apart from valid ones, so a flood of them never pushes a valid key out of the cache.
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../db/schema.js';
import { connectDatabase } from '../src/database/connect.js';
import { ApiKeyAuthenticator } from '../src/orgs/authenticator.js';
import { createTestOrg, ManualClock, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import type { ErrorResponse } from './support/json.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startTcpProxy, throughProxy } from './support/tcp-proxy.js';

const FAILURES_PER_MINUTE = 30;

let database: TestDatabase;
let counted: Kysely<Database>;
let lookups = 0;
let direct: TestApp;
let proxied: TestApp;
let org: TestOrg;
// The apps' clocks stand still unless a test moves them, so no allowance refills mid-flood, however
// slowly a crowded machine runs it.
const directClock = new ManualClock();
const proxiedClock = new ManualClock();

beforeAll(async () => {
  database = await createTestDatabase();
  const { pool } = connectDatabase(database.url, { poolSize: 5 });
  counted = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      // Key lookups only: a valid key's use is also written (at most once a minute), which is no lookup.
      const sql = event.level === 'query' ? event.query.sql : '';
      if (sql.startsWith('select') && sql.includes('"api_keys"')) lookups += 1;
    },
  });
  const config = { authFailuresPerMinute: FAILURES_PER_MINUTE, apiKeyCacheTtlMs: 10_000 };
  direct = await startTestApp({ db: counted, url: database.url }, { workers: false, config, clock: directClock });
  proxied = await startTestApp(
    { db: counted, url: database.url },
    { workers: false, config: { ...config, trustProxyHops: 1 }, clock: proxiedClock },
  );
  org = await createTestOrg(database.db);
});

afterAll(async () => {
  await direct?.close();
  await proxied?.close();
  await counted?.destroy();
  await database?.drop();
});

const madeUpKey = () => `svc_live_${randomBytes(4).toString('hex')}_${randomBytes(16).toString('hex')}`;
const bearer = (key: string, extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${key}`, ...extra });

describe('a flood of made-up keys from one address', () => {
  it('gets 401 for its allowance, then 429 with Retry-After, costing one lookup per allowed failure', async () => {
    // The valid key is used (and cached) before the flood starts.
    expect((await rawRequest(direct, 'GET', '/contacts', { headers: bearer(org.key) })).status).toBe(200);
    lookups = 0;
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 200; i += 1) {
      // A forged X-Forwarded-For changes nothing: this app trusts no proxy.
      const response = await rawRequest(direct, 'GET', '/contacts', {
        headers: bearer(madeUpKey(), { 'X-Forwarded-For': `203.0.113.${i % 250}` }),
      });
      statuses.push(response.status);
      if (response.status === 429) retryAfter = response.headers.get('retry-after');
    }
    expect(statuses.slice(0, FAILURES_PER_MINUTE).every((status) => status === 401)).toBe(true);
    expect(statuses.slice(FAILURES_PER_MINUTE).every((status) => status === 429)).toBe(true);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(Number(retryAfter)).toBeLessThanOrEqual(60);
    // One lookup per allowed failure, and one read of the active key prefixes once the address ran out.
    expect(lookups).toBeLessThanOrEqual(FAILURES_PER_MINUTE + 1);
    console.log(
      `bad-key flood: 200 requests, ${statuses.filter((s) => s === 429).length} refused with 429, ${lookups} key lookups`,
    );

    // The flooding address's own valid key, known to the cache, still works.
    expect((await rawRequest(direct, 'GET', '/contacts', { headers: bearer(org.key) })).status).toBe(200);

    // The allowance refills steadily: two seconds buy one more failed attempt (30 a minute), not more.
    directClock.advance(2_000);
    expect((await rawRequest(direct, 'GET', '/contacts', { headers: bearer(madeUpKey()) })).status).toBe(401);
    expect((await rawRequest(direct, 'GET', '/contacts', { headers: bearer(madeUpKey()) })).status).toBe(429);
  });

  it('is counted per client address behind a trusted proxy, leaving other clients alone', async () => {
    const flooder = { 'X-Forwarded-For': '198.51.100.7' };
    for (let i = 0; i < FAILURES_PER_MINUTE; i += 1) {
      expect((await rawRequest(proxied, 'GET', '/contacts', { headers: bearer(madeUpKey(), flooder) })).status).toBe(
        401,
      );
    }
    const refused = await rawRequest<ErrorResponse>(proxied, 'GET', '/contacts', {
      headers: bearer(madeUpKey(), flooder),
    });
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('too_many_requests');
    // Another client behind the same proxy, with a valid key never seen before by this app.
    const other = await createTestOrg(database.db);
    const fine = await rawRequest(proxied, 'GET', '/contacts', {
      headers: bearer(other.key, { 'X-Forwarded-For': '198.51.100.8' }),
    });
    expect(fine.status).toBe(200);
  });

  it('lets no more failures through than the allowance when they arrive all at once', async () => {
    const address = { 'X-Forwarded-For': '198.51.100.99' };
    // Straight to the app, all at once (a judging proxy in front would pace them).
    const statuses = await Promise.all(
      Array.from({ length: 100 }, () =>
        fetch(`${proxied.apiUrl}/contacts`, { headers: bearer(madeUpKey(), address) }).then((r) => r.status),
      ),
    );
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(FAILURES_PER_MINUTE + 1);
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
  });

  it('looks an unknown key up once, then remembers it', async () => {
    const key = madeUpKey();
    const address = { 'X-Forwarded-For': '192.0.2.44' };
    lookups = 0;
    for (let i = 0; i < 5; i += 1) {
      expect((await rawRequest(proxied, 'GET', '/contacts', { headers: bearer(key, address) })).status).toBe(401);
    }
    expect(lookups).toBe(1);
  });
});

describe('a flood of made-up keys across two API instances', () => {
  it('draws on one allowance per address, and never locks out a valid key in use from that address', async () => {
    // A short key cache, so the valid key's cached lookup lapses while the address is out of failures.
    const config = { authFailuresPerMinute: FAILURES_PER_MINUTE, apiKeyCacheTtlMs: 200 };
    const apps = [
      await startTestApp({ db: database.db, url: database.url }, { workers: false, config }),
      await startTestApp({ db: database.db, url: database.url }, { workers: false, config }),
    ];
    try {
      // The flood of the tests above spent this address's allowance on a clock of their own.
      await database.db.deleteFrom('auth_failure_allowances').execute();
      const valid = await createTestOrg(database.db);
      for (const app of apps) {
        expect((await rawRequest(app, 'GET', '/contacts', { headers: bearer(valid.key) })).status).toBe(200);
      }
      const statuses: number[] = [];
      const startedAt = Date.now();
      const validStatuses: number[] = [];
      for (let i = 0; i < 120; i += 1) {
        const app = apps[i % 2]!;
        statuses.push((await rawRequest(app, 'GET', '/contacts', { headers: bearer(madeUpKey()) })).status);
        if (i % 10 === 9) {
          await new Promise((resolve) => setTimeout(resolve, 250));
          validStatuses.push((await rawRequest(app, 'GET', '/contacts', { headers: bearer(valid.key) })).status);
        }
      }
      const floodEndedAt = Date.now();
      const failures = statuses.filter((status) => status === 401).length;
      console.log(`two instances: ${failures} failed authentications allowed of 120, then 429s`);
      // One allowance: at most one failure over it per instance, plus what refills while the test runs
      // (two instances counting apart would allow twice the allowance).
      const refilled = Math.ceil(((Date.now() - startedAt) / 60_000) * FAILURES_PER_MINUTE);
      expect(failures).toBeGreaterThanOrEqual(FAILURES_PER_MINUTE);
      expect(failures).toBeLessThanOrEqual(FAILURES_PER_MINUTE + 2 + refilled);
      expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
      // The valid key, its cached lookup lapsed, is looked up again and works from the same address.
      expect(validStatuses).toEqual(Array(12).fill(200));
      // So does a key this address never used on either instance, and any key on an instance started
      // after the address ran out (it knows no key yet): existing keys are still looked up.
      const unused = await createTestOrg(database.db);
      // A key made during the flood is known once the list of active keys is read again (within a second).
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      expect((await rawRequest(apps[1]!, 'GET', '/contacts', { headers: bearer(unused.key) })).status).toBe(200);
      const restarted = await startTestApp({ db: database.db, url: database.url }, { workers: false, config });
      try {
        // Its first made-up key costs one lookup and teaches it the shared allowance is spent; what refilled
        // since the flood (more on a slow machine) may let a few more through before the 429.
        let tries = 0;
        let answer: Awaited<ReturnType<typeof rawRequest>>;
        do {
          answer = await rawRequest(restarted, 'GET', '/contacts', { headers: bearer(madeUpKey()) });
          tries += 1;
        } while (answer.status !== 429 && tries < 10);
        expect(answer.status).toBe(429);
        expect(tries).toBeLessThanOrEqual(2 + Math.ceil(((Date.now() - floodEndedAt) / 60_000) * FAILURES_PER_MINUTE));
        expect((await rawRequest(restarted, 'GET', '/contacts', { headers: bearer(valid.key) })).status).toBe(200);
      } finally {
        await restarted.close();
      }
      // The allowance refills while the test runs (a slow machine gives it a few more): spend it again.
      let refused = await rawRequest<ErrorResponse>(apps[0]!, 'GET', '/contacts', { headers: bearer(madeUpKey()) });
      for (let i = 0; i < 10 && refused.status !== 429; i += 1) {
        refused = await rawRequest(apps[0]!, 'GET', '/contacts', { headers: bearer(madeUpKey()) });
      }
      expect(refused.status).toBe(429);
      expect(refused.body.error.message).toMatch(/retry in (1 second|\d+ seconds) with a valid API key/);
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  }, 60_000);
});

describe('a database that fails during a lookup', () => {
  it('spends none of the address allowance: a failure the database never counted is no failure', async () => {
    const proxy = await startTcpProxy({
      host: new URL(database.url).hostname,
      port: Number(new URL(database.url).port || 5432),
    });
    const flaky = connectDatabase(throughProxy(database.url, proxy), {
      poolSize: 2,
      queryTimeoutMs: 200,
      connectTimeoutMs: 500,
    });
    const clock = new ManualClock();
    const authenticator = new ApiKeyAuthenticator(flaky.db, clock, { cacheTtlMs: 0, failuresPerMinute: 3 });
    try {
      // The address's first made-up key is counted: 2 failures left.
      expect(await authenticator.authenticate(`Bearer ${madeUpKey()}`, '192.0.2.77')).toBeNull();
      proxy.silence();
      for (let i = 0; i < 5; i += 1) {
        await expect(authenticator.authenticate(`Bearer ${madeUpKey()}`, '192.0.2.77')).rejects.not.toMatchObject({
          code: 'too_many_requests',
        });
      }
      proxy.resume();
      // Once the database answers again, the two failures left are still there, and then no more.
      for (let i = 0; i < 2; i += 1) {
        expect(await authenticator.authenticate(`Bearer ${madeUpKey()}`, '192.0.2.77')).toBeNull();
      }
      await expect(authenticator.authenticate(`Bearer ${madeUpKey()}`, '192.0.2.77')).rejects.toMatchObject({
        code: 'too_many_requests',
      });
    } finally {
      proxy.resume();
      await flaky.db.destroy();
      await proxy.close();
    }
  });
});

describe('the key caches', () => {
  it('never push a valid key out, however many unknown keys are tried', async () => {
    const authenticator = new ApiKeyAuthenticator(
      counted,
      { now: () => new Date() },
      {
        // Far longer than the test: what is checked is that no entry is pushed out, not how long it lives.
        cacheTtlMs: 600_000,
        failuresPerMinute: 1_000_000,
      },
    );
    expect(await authenticator.authenticate(`Bearer ${org.key}`, '192.0.2.1')).toMatchObject({ orgId: org.orgId });
    // More unknown keys than the unknown-key cache holds, five at a time (the pool's size).
    const LANES = 5;
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        for (let i = lane; i < 25_000; i += LANES) {
          expect(await authenticator.authenticate(`Bearer ${madeUpKey()}`, `10.0.${i >> 8}.${i & 255}`)).toBeNull();
        }
      }),
    );
    lookups = 0;
    expect(await authenticator.authenticate(`Bearer ${org.key}`, '192.0.2.1')).toMatchObject({ orgId: org.orgId });
    expect(lookups).toBe(0);
  }, 240_000);
});
