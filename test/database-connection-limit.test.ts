// PostgreSQL with no connection left for one more client (a role's connection limit here; the server's
// max_connections in production) is up, not down: the readiness probe, which cannot open its own
// connection then, still reports ready, and the API keeps answering on the connections its pool has. A
// request that needs a new connection gets 503 service_unavailable with Retry-After and opens no
// breaker, so a request is served again as soon as a connection is free.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Db } from '../src/database/connect.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { waitFor } from './support/calls.js';
import { adminQuery, createTestDatabase, type TestDatabase } from './support/database.js';
import type { ErrorResponse } from './support/json.js';

/** The connections the limited role may hold at once. */
const ROLE_CONNECTION_LIMIT = 2;
/** PostgreSQL's SQLSTATE for a connection refused over a limit. */
const TOO_MANY_CONNECTIONS = '53300';

const role = `voice_limited_${randomBytes(4).toString('hex')}`;
let database: TestDatabase;
let limitedUrl: string;
let limitedDb: Db | null = null;
let app: TestApp | null = null;
let org: TestOrg;
const fillers: pg.Client[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  await adminQuery(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT ${ROLE_CONNECTION_LIMIT}`);
  await sql.raw(`GRANT ALL ON ALL TABLES IN SCHEMA public TO ${role}`).execute(database.db);
  await sql.raw(`GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO ${role}`).execute(database.db);
  const url = new URL(database.url);
  url.username = role;
  url.password = '';
  limitedUrl = url.toString();
  org = await createTestOrg(database.db);
}, 60_000);

afterEach(async () => {
  await Promise.all(fillers.splice(0).map((client) => client.end().catch(() => undefined)));
  await app?.close();
  await limitedDb?.destroy();
  app = null;
  limitedDb = null;
});

afterAll(async () => {
  await database?.drop();
  await adminQuery(`DROP ROLE IF EXISTS ${role}`);
});

/**
 * Opens `count` connections as the limited role, kept until `releaseFiller`. A connection closed just
 * before still counts against the limit until its server process has exited: a refusal for too many
 * connections is tried again.
 */
async function fill(count: number): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    fillers.push(
      await waitFor(
        'a connection slot for the filler',
        async () => {
          const client = new pg.Client({ connectionString: limitedUrl });
          client.on('error', () => undefined);
          try {
            await client.connect();
            return client;
          } catch (error) {
            if ((error as { code?: unknown }).code !== TOO_MANY_CONNECTIONS) throw error;
            return null;
          }
        },
        10_000,
      ),
    );
  }
}

/** Closes one connection opened by `fill`. */
async function releaseFiller(): Promise<void> {
  await fillers.pop()?.end();
}

/** Starts the app as the limited role with a pool of `poolSize`. */
async function startLimitedApp(poolSize: number): Promise<TestApp> {
  const connected = connectDatabase(limitedUrl, { poolSize, namedStatements: true });
  limitedDb = connected.db;
  app = await startTestApp({ db: connected.db, url: limitedUrl }, { workers: false });
  return app;
}

async function readyz(testApp: TestApp): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${testApp.baseUrl}/readyz`);
  return { status: response.status, body: await response.json() };
}

describe('a database with no connection left for this service', () => {
  it('keeps /readyz at 200 and the API answering on the connections its pool holds', async () => {
    const testApp = await startLimitedApp(1);
    const calls = testApp.client(org.key);
    // The pool's one connection is open; the filler takes the role's last slot.
    expect((await calls.GET('/calls')).response.status).toBe(200);
    await fill(1);

    // The probe cannot open its own connection: the server answers "too many connections".
    const probed = await readyz(testApp);
    expect(probed).toEqual({ status: 200, body: { status: 'ready', database: 'ok' } });
    for (let i = 0; i < 3; i += 1) {
      expect((await calls.GET('/calls')).response.status).toBe(200);
    }
  });

  it('answers 503 with Retry-After when no connection can be opened, and opens no breaker', async () => {
    // An app whose pool has no connection yet, and no slot left for one.
    const testApp = await startLimitedApp(1);
    await fill(ROLE_CONNECTION_LIMIT);

    const refused = await rawRequest<ErrorResponse>(testApp, 'GET', '/calls', {
      headers: { authorization: `Bearer ${org.key}` },
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).not.toBeNull();
    expect(refused.body.error.code).toBe('service_unavailable');
    // A full server opened no breaker: nothing waits for a probe before the next request is tried.
    expect(testApp.deps.readiness.databaseDown).toBe(false);

    // Served as soon as the server has let the released connection go.
    await releaseFiller();
    await waitFor(
      'a request served once a connection is free',
      async () => (await testApp.client(org.key).GET('/calls')).response.status === 200,
      10_000,
    );
    expect((await readyz(testApp)).status).toBe(200);
  });
});
