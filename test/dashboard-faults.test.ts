// A dashboard request that fails on the server's side gets a page, as every other dashboard answer
// does, not the API's JSON envelope: a database that holds the request past its deadline gives a 503
// page with Retry-After, as does a database that refuses new connections, and an unexpected failure a
// 500 page; the API keeps its envelope for each. A fault page shows the test-mode banner when the
// session was read before the failure, and is drawn without a session when reading it was what failed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import pg from 'pg';
import { databaseFault } from '../src/database/faults.js';
import { adminQuery, createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { acceptLink, inviteMember } from '../src/members/service.js';
import { startSession } from '../src/members/sessions.js';
import { SESSION_COOKIE } from '../src/dashboard/cookies.js';
import { PASSWORD } from './support/dashboard.js';

const DEADLINE_MS = 500;

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;
let cookie: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false, config: { requestTimeoutMs: DEADLINE_MS } });
  org = await createTestOrg(database.db);
  const by = { actor: 'cli', address: null };
  const { token } = await inviteMember(
    database.db,
    { orgId: org.orgId, email: 'faults@example.com', role: 'admin' },
    by,
  );
  const user = await acceptLink(database.db, token, PASSWORD);
  // Signed in directly, not through the login form, which would have to beat the short deadline.
  const lifetimes = { idleMs: 60 * 60_000, absoluteMs: 2 * 60 * 60_000 };
  const { token: session } = await startSession(database.db, user, lifetimes, new Date(), null);
  cookie = `${SESSION_COOKIE}=${session}`;
}, 60_000);

/** The banner of a page in test mode (see layout.ts). */
const TEST_BANNER = '<section class="test-banner" aria-label="Test mode">';

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Runs `during` while another transaction holds `table` locked against every other use. */
async function whileLocked<T>(table: string, during: () => Promise<T>): Promise<T> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const holder = database.db.transaction().execute(async (trx) => {
    await sql`LOCK TABLE ${sql.table(table)} IN ACCESS EXCLUSIVE MODE`.execute(trx);
    locked();
    await released;
  });
  await isLocked;
  try {
    return await during();
  } finally {
    release();
    await holder;
  }
}

describe('dashboard faults', { timeout: 60_000 }, () => {
  it('answers a page held past the deadline by the database with a 503 page, Retry-After and a reference', async () => {
    // Paths match whatever their case, so the fault page must too.
    const response = await whileLocked('dashboard_sessions', () =>
      fetch(`${app.baseUrl}/Dashboard/keys`, { headers: { Cookie: cookie } }),
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const body = await response.text();
    expect(body).toContain('<!doctype html>');
    expect(body).toContain('Not available right now');
    expect(body).toContain('The service could not answer in time; try again in a few seconds.');
    expect(body).toContain(`give support this reference: ${response.headers.get('request-id')}.`);
    expect(body).toContain('<a href="/dashboard">Back to the overview</a>');
    // The session could not be read: the page shows none, test mode or not.
    expect(body).not.toContain(TEST_BANNER);
    expect(body).not.toContain('Sign out');

    // Nor does the page for an unknown address, whose session read is held the same way.
    const unknown = await whileLocked('dashboard_sessions', () =>
      fetch(`${app.baseUrl}/dashboard/no-such-page`, { headers: { Cookie: `${cookie}; dashboard_mode=test` } }),
    );
    expect(unknown.status).toBe(503);
    const unknownBody = await unknown.text();
    expect(unknownBody).toContain('<title>Not available right now · Dashboard</title>');
    expect(unknownBody).not.toContain(TEST_BANNER);
    expect(unknownBody).not.toContain('Sign out');

    // A form's work goes on past the deadline: the page does not invite a blind retry.
    const form = await whileLocked('dashboard_sessions', () =>
      fetch(`${app.baseUrl}/dashboard/keys`, {
        method: 'POST',
        headers: { Cookie: cookie, Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'label=late',
      }),
    );
    expect(form.status).toBe(503);
    expect(await form.text()).toContain('Your change may or may not have been made: check before trying again.');

    const api = await whileLocked('api_keys', () =>
      fetch(`${app.apiUrl}/calls`, { headers: { Authorization: `Bearer ${org.key}` } }),
    );
    expect(api.status).toBe(503);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
  });

  it('answers 503 with Retry-After, not 500, while the database refuses connections, and recovers', async () => {
    const name = new URL(database.url).pathname.slice(1);
    await adminQuery(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    try {
      await adminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}'`);
      for (const [what, request] of [
        ['a page', () => fetch(`${app.baseUrl}/dashboard/keys`, { headers: { Cookie: cookie } })],
        ['the API', () => fetch(`${app.apiUrl}/calls`, { headers: { Authorization: `Bearer ${org.key}` } })],
      ] as const) {
        for (let attempt = 0; attempt < 3; attempt += 1) {
          const response = await request();
          expect(response.status, `${what}, attempt ${attempt + 1}`).toBe(503);
          expect(response.headers.get('retry-after'), what).toMatch(/^[1-9]\d*$/);
          await response.body?.cancel();
        }
      }
    } finally {
      await adminQuery(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    }
    await expect
      .poll(async () => (await fetch(`${app.baseUrl}/dashboard/keys`, { headers: { Cookie: cookie } })).status, {
        timeout: 15_000,
      })
      .toBe(200);
  });

  it('answers an unexpected failure with a 500 page naming no internals, in the mode the member is in', async () => {
    await sql`ALTER TABLE audit_log RENAME TO audit_log_away`.execute(database.db);
    try {
      const response = await fetch(`${app.baseUrl}/dashboard/audit`, { headers: { Cookie: cookie } });
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const body = await response.text();
      expect(body).toContain('Something went wrong on our side.');
      expect(body).toContain(`give support this reference: ${response.headers.get('request-id')}.`);
      expect(response.headers.get('request-id')).toMatch(/^req_/);
      expect(body).not.toContain('audit_log');
      // Signed in, live: the member's navigation, no banner.
      expect(body).toContain('<title>Something went wrong · Dashboard</title>');
      expect(body).toContain('Sign out');
      expect(body).not.toContain(TEST_BANNER);

      const inTest = await fetch(`${app.baseUrl}/dashboard/audit`, {
        headers: { Cookie: `${cookie}; dashboard_mode=test` },
      });
      expect(inTest.status).toBe(500);
      const testBody = await inTest.text();
      expect(testBody).toContain('<title>Something went wrong · Test mode · Dashboard</title>');
      expect(testBody).toContain(TEST_BANNER);
      expect(testBody).toContain('Something went wrong on our side.');
      expect(testBody).not.toContain('audit_log');
    } finally {
      await sql`ALTER TABLE audit_log_away RENAME TO audit_log`.execute(database.db);
    }
  });
});

describe('which errors of PostgreSQL count as an outage', { timeout: 60_000 }, () => {
  /** The error PostgreSQL answers a connection to database `other` with (this file's when absent). */
  async function connectionError(other?: string): Promise<unknown> {
    const url = new URL(database.url);
    if (other) url.pathname = `/${other}`;
    const client = new pg.Client({ connectionString: url.toString() });
    try {
      await client.connect();
      return await client.query('SELECT lastval()').then(
        () => null,
        (error: unknown) => error,
      );
    } catch (error) {
      return error;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  it("a database refusing connections does; a statement's own 55000 and an unknown database do not", async () => {
    // In a session, lastval() before any sequence was used is SQLSTATE 55000 at severity ERROR.
    const statement = await connectionError();
    expect(statement).toMatchObject({ code: '55000', severity: 'ERROR' });
    expect(databaseFault(statement)).toBeNull();
    // A database that does not exist is a configuration error (3D000, FATAL), not an outage.
    const unknown = await connectionError('no_such_database_here');
    expect(unknown).toMatchObject({ code: '3D000', severity: 'FATAL' });
    expect(databaseFault(unknown)).toBeNull();
    const name = new URL(database.url).pathname.slice(1);
    await adminQuery(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    try {
      const refused = await connectionError();
      expect(refused).toMatchObject({ code: '55000', severity: 'FATAL' });
      expect(databaseFault(refused)).toBe('unreachable');
    } finally {
      await adminQuery(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    }
  });
});
