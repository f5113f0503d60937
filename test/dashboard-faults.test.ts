// A dashboard request that fails on the server's side gets a page, as every other dashboard answer
// does, not the API's JSON envelope: a database that holds the request past its deadline gives a 503
// page with Retry-After, and an unexpected failure a 500 page; the API keeps its envelope for both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { acceptLink, inviteMember } from '../src/dashboard/members.js';
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
  await acceptLink(database.db, token, PASSWORD);
  const signIn = await fetch(`${app.baseUrl}/dashboard/login`, {
    method: 'POST',
    headers: { Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: 'faults@example.com', password: PASSWORD }).toString(),
    redirect: 'manual',
  });
  expect(signIn.status).toBe(303);
  cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
}, 60_000);

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
  it('answers a page held past the deadline by the database with a 503 page and Retry-After', async () => {
    const response = await whileLocked('dashboard_sessions', () =>
      fetch(`${app.baseUrl}/dashboard/keys`, { headers: { Cookie: cookie } }),
    );
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('2');
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    const body = await response.text();
    expect(body).toContain('<!doctype html>');
    expect(body).toContain('Not available right now');
    expect(body).toContain('could not be answered in time; retry in 2 seconds.');

    const api = await whileLocked('api_keys', () =>
      fetch(`${app.apiUrl}/calls`, { headers: { Authorization: `Bearer ${org.key}` } }),
    );
    expect(api.status).toBe(503);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('service_unavailable');
  });

  it('answers an unexpected failure with a 500 page naming no internals', async () => {
    await sql`ALTER TABLE audit_log RENAME TO audit_log_away`.execute(database.db);
    try {
      const response = await fetch(`${app.baseUrl}/dashboard/audit`, { headers: { Cookie: cookie } });
      expect(response.status).toBe(500);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const body = await response.text();
      expect(body).toContain('Something went wrong');
      expect(body).toContain('Quote the Request-Id header when contacting support.');
      expect(body).not.toContain('audit_log');
      expect(response.headers.get('request-id')).toBeTruthy();
    } finally {
      await sql`ALTER TABLE audit_log_away RENAME TO audit_log`.execute(database.db);
    }
  });
});
