// The database goes silent (connections stay open, nothing comes back, as a hung server or a network
// partition looks) under a running app with its workers. Every API request is answered 503
// service_unavailable with Retry-After within its deadline, never 401 and never a hang; /readyz turns
// 503 within a few seconds and back to 200 by itself when the database answers again; the workers log
// the outage once when it begins and once when it ends. A query that gets no answer within the client-side
// timeout fails as an unreachable database, and its connection is not used again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { connectDatabase, type Db } from '../src/database/connect.js';
import { databaseFault } from '../src/database/faults.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { parseJson, type ErrorResponse } from './support/json.js';
import { waitFor } from './support/calls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startTcpProxy, throughProxy, type TcpProxy } from './support/tcp-proxy.js';

const SILENT_MS = 12_000;

let database: TestDatabase;
let proxy: TcpProxy;
let db: Db;
let app: TestApp;
let org: TestOrg;
const log: Array<{ msg: string }> = [];

beforeAll(async () => {
  database = await createTestDatabase();
  const target = new URL(database.url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const url = throughProxy(database.url, proxy);
  db = connectDatabase(url, { poolSize: 10 }).db;
  app = await startTestApp(
    { db, url },
    { config: { logLevel: 'info' }, logStream: { write: (line: string) => void log.push(parseJson(line)) } },
  );
  org = await createTestOrg(database.db);
});

afterAll(async () => {
  await app?.close();
  await db?.destroy();
  await proxy?.close();
  await database?.drop();
});

const count = (text: string) => log.filter((line) => line.msg.includes(text)).length;

describe('a database that goes silent', () => {
  it(
    'gets 503 with Retry-After, never 401 or a hang; /readyz follows it down and back up by itself',
    { timeout: 60_000 },
    async () => {
      const headers = { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' };
      expect((await rawRequest(app, 'GET', '/calls', { headers })).status).toBe(200);
      const deadline = app.deps.config.requestTimeoutMs;

      proxy.silence();
      const silencedAt = Date.now();
      const answers: Array<{ at: number; ms: number; status: number; code?: string; retryAfter: string | null }> = [];
      let readyDownAt: number | null = null;
      const requests: Array<Promise<void>> = [];
      while (Date.now() - silencedAt < SILENT_MS) {
        for (const [method, path, body] of [
          ['GET', '/calls', undefined],
          ['POST', '/contacts', JSON.stringify({ phone_e164: '+919811122233', consent_capture: 'manual' })],
        ] as const) {
          const started = Date.now();
          requests.push(
            rawRequest<Partial<ErrorResponse> | null>(app, method, path, { headers, ...(body ? { body } : {}) }).then(
              (response) => {
                answers.push({
                  at: started - silencedAt,
                  ms: Date.now() - started,
                  status: response.status,
                  code: response.body?.error?.code,
                  retryAfter: response.headers.get('retry-after'),
                });
              },
            ),
          );
        }
        const ready = await fetch(`${app.baseUrl}/readyz`);
        if (ready.status === 503) {
          readyDownAt ??= Date.now() - silencedAt;
          expect(await ready.json()).toEqual({
            status: 'unavailable',
            database: 'unreachable',
            reason: 'database_unavailable',
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      await Promise.all(requests);

      for (const answer of answers) {
        expect(answer.status, JSON.stringify(answer)).toBe(503);
        expect(answer.code).toBe('service_unavailable');
        expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(answer.ms).toBeLessThanOrEqual(deadline + 500);
      }
      const first503 = Math.min(...answers.map((answer) => answer.at + answer.ms));
      const fast = answers.filter((answer) => answer.at > first503);
      expect(fast.length).toBeGreaterThan(10);
      // Once the first 503 is out, the rest are answered without waiting on the database. A request that
      // waited on it would take at least the connect timeout; half of it leaves room for a crowded
      // machine's pauses and still tells the two apart.
      const { dbConnectTimeoutMs, dbQueryTimeoutMs } = app.deps.config;
      expect(Math.max(...fast.map((answer) => answer.ms))).toBeLessThan(
        Math.min(dbConnectTimeoutMs, dbQueryTimeoutMs) / 2,
      );
      expect(readyDownAt).not.toBeNull();
      expect(readyDownAt!).toBeLessThan(3_000);

      proxy.resume();
      const resumedAt = Date.now();
      await waitFor('/readyz to answer 200', async () => (await fetch(`${app.baseUrl}/readyz`)).status === 200, 15_000);
      const readyAfter = Date.now() - resumedAt;
      await waitFor(
        'the API to answer 200',
        async () => (await rawRequest(app, 'GET', '/calls', { headers })).status === 200,
        15_000,
      );
      const apiAfter = Date.now() - resumedAt;
      console.log(
        `silent database: first 503 after ${first503} ms, later ones in at most ${Math.max(...fast.map((a) => a.ms))} ms; ` +
          `/readyz 503 after ${readyDownAt} ms; after it answered again /readyz 200 in ${readyAfter} ms, the API in ${apiAfter} ms`,
      );

      // Each worker said it paused once and resumed once (the job engine logs its own "resumed" line, so
      // the wait names the two workers').
      await waitFor(
        'the workers to resume',
        () => count('call progress resumed') > 0 && count('webhook delivery resumed') > 0,
        35_000,
      );
      expect(count('call progress paused')).toBe(1);
      expect(count('call progress resumed')).toBe(1);
      expect(count('webhook delivery paused')).toBe(1);
      expect(count('webhook delivery resumed')).toBe(1);
      expect(count('database unavailable: work that needs it is refused or waits')).toBe(1);
      expect(count('database available again')).toBe(1);
    },
  );
});

describe('a query that gets no answer in time', () => {
  it(
    'fails as an unreachable database, in a transaction too, and its connection is never used again',
    { timeout: 30_000 },
    async () => {
      const target = new URL(database.url);
      const ownProxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const small = connectDatabase(throughProxy(database.url, ownProxy), { poolSize: 1, queryTimeoutMs: 500 }).db;
      const backend = async () =>
        (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(small)).rows[0]!.pid;
      try {
        const before = await backend();
        ownProxy.silence();
        const started = Date.now();
        const failure = await backend().then(
          () => null,
          (error: unknown) => error,
        );
        expect(Date.now() - started).toBeLessThan(2_000);
        expect(databaseFault(failure)).toBe('unreachable');
        // The late answer, held by the proxy until now, must not reach the next query: a new connection runs it.
        ownProxy.resume();
        const second = await backend();
        expect(second).not.toBe(before);

        // The same inside a transaction: the query's own failure comes back, without waiting on a rollback.
        const inTransaction = await small
          .transaction()
          .execute(async (trx) => {
            await sql`SELECT 1`.execute(trx);
            ownProxy.silence();
            await sql`SELECT 1`.execute(trx);
          })
          .then(
            () => null,
            (error: unknown) => error,
          );
        expect(databaseFault(inTransaction)).toBe('unreachable');
        ownProxy.resume();
        expect(await backend()).not.toBe(second);
      } finally {
        await small.destroy();
        await ownProxy.close();
      }
    },
  );
});
