// The foundation through real HTTP: authentication, rate limiting, the error envelope and probes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, ManualClock, type TestApp, type TestOrg } from './support/app.js';
import { jsonBody, type ErrorResponse } from './support/json.js';
import { issueApiKey } from '../src/orgs/api-keys.js';
import { revokeKey } from '../src/orgs/api-key-queries.js';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  org = await createTestOrg(database.db);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });

describe('authentication', () => {
  const unauthorizedCases: Array<[string, Record<string, string>]> = [
    ['missing header', {}],
    ['wrong scheme', { Authorization: 'Basic dXNlcjpwYXNz' }],
    ['malformed key', { Authorization: 'Bearer svc_live_short' }],
    ['unknown key', { Authorization: 'Bearer svc_live_abcdefgh_ABCDEFGHIJKLMNOPQRSTUVWXYZ012345' }],
  ];

  it.each(unauthorizedCases)('refuses a request with a %s with the same 401', async (_name, headers) => {
    const response = await rawRequest(app, 'GET', '/contacts', { headers });
    expect(response.status).toBe(401);
    expect(response.body).toEqual({
      error: {
        code: 'unauthorized',
        message: 'A valid API key is required in the Authorization header (Bearer svc_live_...).',
      },
    });
    expect(response.headers.get('request-id')).toMatch(/^req_[0-9a-f]{16}$/);
  });

  it('refuses a key whose secret part is wrong even when its prefix exists', async () => {
    const prefix = org.key.split('_')[2]!;
    const response = await rawRequest(app, 'GET', '/contacts', {
      headers: bearer(`svc_live_${prefix}_${'x'.repeat(32)}`),
    });
    expect(response.status).toBe(401);
  });

  it('accepts a valid key and scopes it to its org', async () => {
    const { data, response } = await app.client(org.key).GET('/contacts');
    expect(response.status).toBe(200);
    expect(data?.pagination.total).toBe(0);
  });

  it('stops accepting a revoked key once the cache bound has passed', async () => {
    const clock = new ManualClock();
    const cached = await startTestApp(database, { workers: false, clock, config: { apiKeyCacheTtlMs: 5_000 } });
    try {
      const { key, prefix } = await issueApiKey(database.db, org.orgId);
      expect((await rawRequest(cached, 'GET', '/contacts', { headers: bearer(key) })).status).toBe(200);
      await revokeKey(database.db, prefix, new Date());
      clock.advance(5_001);
      const after = await rawRequest<ErrorResponse>(cached, 'GET', '/contacts', { headers: bearer(key) });
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('unauthorized');
    } finally {
      await cached.close();
    }
  });
});

describe('rate limit', () => {
  it('refuses the 121st request in a 60-second window, shares the window across instances, and slides', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 10, 0, 0, 0));
    const first = await startTestApp(database, { workers: false, clock });
    const second = await startTestApp(database, { workers: false, clock });
    const limited = await createTestOrg(database.db);
    try {
      for (let i = 0; i < 60; i += 1) {
        const response = await rawRequest(first, 'GET', '/contacts?limit=1', { headers: bearer(limited.key) });
        expect(response.status).toBe(200);
        expect(response.headers.get('x-ratelimit-limit')).toBe('120');
        expect(response.headers.get('x-ratelimit-remaining')).toBe(String(119 - i));
      }
      clock.advance(30_000);
      for (let i = 0; i < 60; i += 1) {
        const response = await rawRequest(second, 'GET', '/contacts?limit=1', { headers: bearer(limited.key) });
        expect(response.status).toBe(200);
      }
      const refused = await rawRequest<ErrorResponse>(first, 'GET', '/contacts', { headers: bearer(limited.key) });
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('too_many_requests');
      // The first 60 requests were made at 10:00:00.000; they leave the window exactly 60 s later.
      expect(refused.headers.get('retry-after')).toBe('30');
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');

      clock.advance(29_999);
      const almost = await rawRequest(second, 'GET', '/contacts', { headers: bearer(limited.key) });
      expect(almost.status).toBe(429);
      expect(almost.headers.get('retry-after')).toBe('1');
      clock.advance(1);
      const slid = await rawRequest(second, 'GET', '/contacts', { headers: bearer(limited.key) });
      expect(slid.status).toBe(200);
      expect(slid.headers.get('x-ratelimit-remaining')).toBe('59');

      // Another org has its own window.
      expect((await rawRequest(first, 'GET', '/contacts', { headers: bearer(org.key) })).status).toBe(200);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('uses the higher limit of the scale plan', async () => {
    const scale = await createTestOrg(database.db, { planId: 'scale' });
    const response = await rawRequest(app, 'GET', '/contacts', { headers: bearer(scale.key) });
    expect(response.headers.get('x-ratelimit-limit')).toBe('1200');
  });
});

describe('error envelope', () => {
  it('answers an unknown route with not_found', async () => {
    const response = await rawRequest<ErrorResponse>(app, 'GET', '/nothing-here', { headers: bearer(org.key) });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('not_found');
    const outside = await fetch(`${app.baseUrl}/not-the-api`);
    expect(outside.status).toBe(404);
    expect((await jsonBody<ErrorResponse>(outside)).error.code).toBe('not_found');
  });

  it('answers a wrong method with 405 method_not_allowed and an Allow header', async () => {
    const response = await rawRequest<ErrorResponse>(app, 'PUT', '/contacts', { headers: bearer(org.key) });
    expect(response.status).toBe(405);
    expect(response.body.error.code).toBe('method_not_allowed');
    expect(response.headers.get('allow')).toBe('GET, POST');
  });

  it('refuses malformed JSON', async () => {
    const response = await rawRequest<ErrorResponse>(app, 'POST', '/contacts', {
      headers: { ...bearer(org.key), 'Content-Type': 'application/json' },
      body: '{"phone_e164": ',
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request', param: 'body' });
  });

  it('refuses a body that is not JSON', async () => {
    const response = await rawRequest<ErrorResponse>(app, 'POST', '/contacts', {
      headers: { ...bearer(org.key), 'Content-Type': 'text/plain' },
      body: 'phone=+919812345678',
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request', param: 'Content-Type' });
  });

  it('refuses a body over 64 KiB', async () => {
    const response = await rawRequest<ErrorResponse>(app, 'POST', '/contacts', {
      headers: { ...bearer(org.key), 'Content-Type': 'application/json' },
      body: JSON.stringify({ phone_e164: '+919812345678', name: 'x'.repeat(70_000) }),
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request', param: 'body' });
  });

  it('refuses a missing body', async () => {
    const response = await rawRequest<ErrorResponse>(app, 'POST', '/contacts', { headers: bearer(org.key) });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request', param: 'body' });
  });

  it('refuses unknown query parameters and body fields, naming them', async () => {
    const query = await rawRequest<ErrorResponse>(app, 'GET', '/contacts?colour=blue', { headers: bearer(org.key) });
    expect(query.status).toBe(400);
    expect(query.body.error).toMatchObject({ code: 'invalid_request', param: 'colour' });
    expect(query.body.error.details).toEqual({ colour: ['is not a recognised field'] });

    const body = await app.client(org.key).POST('/contacts', {
      body: { phone_e164: '+919812345678', consent_capture: 'manual', nickname: 'A' } as never,
    });
    expect(body.response.status).toBe(400);
    expect(body.error?.error).toMatchObject({ code: 'invalid_request', param: 'nickname' });
  });

  it('refuses out-of-range and mistyped query parameters', async () => {
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=ten', 'limit'],
      ['offset=-1', 'offset'],
      ['limit=1&limit=2', 'limit'],
    ] as const) {
      const response = await rawRequest<ErrorResponse>(app, 'GET', `/contacts?${query}`, { headers: bearer(org.key) });
      expect(response.status, query).toBe(400);
      expect(response.body.error, query).toMatchObject({ code: 'invalid_request', param });
    }
  });
});

describe('probes and published spec', () => {
  it('reports liveness and readiness', async () => {
    expect(await (await fetch(`${app.baseUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${app.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
  });

  it('publishes the spec without authentication', async () => {
    const json = await fetch(`${app.apiUrl}/openapi.json`);
    expect(json.status).toBe(200);
    expect((await jsonBody<{ openapi: string }>(json)).openapi).toBe('3.1.0');
    const yaml = await fetch(`${app.apiUrl}/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(await yaml.text()).toContain('openapi: 3.1.0');
  });
});
