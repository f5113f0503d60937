// A pool connection older than DB_CONNECTION_MAX_AGE_S is replaced once it is next idle, while requests
// keep being served: the server processes PostgreSQL saw at first are gone, and new ones serve. With 0,
// the same connections serve for as long as they work. The service's connections are told apart from
// this test's by the application name in their URL.
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createTestOrg, type TestOrg } from './support/app.js';
import { waitFor } from './support/calls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import {
  killServerProcesses,
  serverEnvironment,
  startServerProcess,
  type ServerProcess,
} from './support/server-process.js';

const APPLICATION = 'connection_age_test';

let database: TestDatabase;
let org: TestOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  org = await createTestOrg(database.db, { planId: 'scale' });
});

afterAll(async () => {
  killServerProcesses();
  await database?.drop();
});

async function startServer(maxAgeS: string): Promise<ServerProcess> {
  const url = new URL(database.url);
  url.searchParams.set('application_name', APPLICATION);
  const server = await startServerProcess(
    await serverEnvironment(url.toString(), { DB_CONNECTION_MAX_AGE_S: maxAgeS, DB_POOL_SIZE: '3' }),
    60_000,
    ['--role', 'api'],
  );
  onTestFailed(() => console.log(`server output:\n${server.output()}`));
  return server;
}

/** The server processes of PostgreSQL now serving the service's connections. */
async function servicePids(): Promise<number[]> {
  const { rows } = await sql<{ pid: number }>`
    SELECT pid FROM pg_stat_activity WHERE application_name = ${APPLICATION} ORDER BY pid`.execute(database.db);
  return rows.map((row) => row.pid);
}

/** Three list requests at once, each answered 200, then a pause that keeps the org under its rate limit. */
async function listCalls(server: ServerProcess): Promise<void> {
  const statuses = await Promise.all(
    [0, 1, 2].map(async () => {
      const response = await fetch(`${server.apiUrl}/calls?limit=5`, {
        headers: { Authorization: `Bearer ${org.key}` },
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  expect(statuses).toEqual([200, 200, 200]);
  await sleep(200);
}

describe('DB_CONNECTION_MAX_AGE_S', () => {
  it('replaces connections past that age while requests keep being served', { timeout: 90_000 }, async () => {
    const server = await startServer('1');
    try {
      await listCalls(server);
      const first = await servicePids();
      expect(first.length).toBeGreaterThan(0);
      const replaced = await waitFor(
        'the first connections to be replaced',
        async () => {
          await listCalls(server);
          const now = await servicePids();
          return now.length > 0 && now.every((pid) => !first.includes(pid)) && now;
        },
        30_000,
      );
      expect(replaced.some((pid) => first.includes(pid))).toBe(false);
    } finally {
      await server.stop('SIGTERM');
    }
  });

  it('keeps the same connections with 0', { timeout: 90_000 }, async () => {
    const server = await startServer('0');
    try {
      await listCalls(server);
      const first = await servicePids();
      expect(first.length).toBeGreaterThan(0);
      // Busy the whole time, so the pool's idle timeout closes none of them either.
      const until = Date.now() + 2_500;
      while (Date.now() < until) await listCalls(server);
      const now = await servicePids();
      expect(first.every((pid) => now.includes(pid))).toBe(true);
    } finally {
      await server.stop('SIGTERM');
    }
  });
});
