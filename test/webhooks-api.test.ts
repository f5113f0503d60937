// Webhook registration and management through real HTTP: URL policy, the per-org maximum, listing,
// PATCH, secret rotation, and ids of another org answered as not found.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import type { ErrorResponse, Schemas } from './support/json.js';
import { register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';

let env: WebhookEnv;
let other: TestOrg;

beforeAll(async () => {
  env = await webhookEnv();
  other = await createTestOrg(env.database.db, { planId: 'scale' });
});

afterAll(async () => {
  await env?.close();
});

/** Registers `url`; the answer's body is the new endpoint and its secret unless the caller declares otherwise. */
const post = <T = Schemas['WebhookSecretResponse']>(
  url: string,
  events: string[] = ['contact.created'],
  key = env.org.key,
) =>
  rawRequest<T>(env.app, 'POST', '/webhooks', {
    headers: { Authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events }),
  });

describe('POST /webhooks', () => {
  it('registers an endpoint and shows its 64-hex secret once', async () => {
    const response = await post('https://127.0.0.1:4/hooks', ['call.completed', 'contact.created']);
    expect(response.status).toBe(201);
    expect(response.body.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(response.body.data).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/) as unknown,
      url: 'https://127.0.0.1:4/hooks',
      events: ['call.completed', 'contact.created'],
      active: true,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown,
      last_delivery_at: null,
      last_delivery_status: null,
    });
    const got = await env.app
      .client(env.org.key)
      .GET('/webhooks/{id}', { params: { path: { id: response.body.data.id } } });
    expect(got.data?.data).toEqual(response.body.data);
    expect(JSON.stringify(got.data)).not.toContain(response.body.secret);
  });

  it('gives every endpoint a different secret', async () => {
    const a = await register(env, 'https://127.0.0.1:4/a');
    const b = await register(env, 'https://127.0.0.1:4/b');
    expect(a.secret).not.toBe(b.secret);
  });

  it.each([
    ['http://', 'http://127.0.0.1:4/hooks'],
    ['ftp://', 'ftp://example.com/hooks'],
  ])('refuses a %s URL with invalid_request on url', async (_name, url) => {
    const response = await post<ErrorResponse>(url);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request', param: 'url' });
  });

  it.each([
    ['localhost', 'https://localhost/hooks', /localhost/],
    ['a *.localhost name', 'https://api.localhost/hooks', /localhost/],
    ['a private address', 'https://10.0.0.1/hooks', /10\.0\.0\.1, a private address/],
    ['the metadata address', 'https://169.254.169.254/latest/meta-data', /cloud metadata/],
    ['IPv6 loopback', 'https://[::1]/hooks', /loopback/],
    ['the IPv6 metadata address', 'https://[fd00:ec2::254]/', /cloud metadata/],
    ["Azure's WireServer", 'https://168.63.129.16/', /cloud metadata/],
    ['an IPv4-compatible address', 'https://[::7f00:1]/', /IPv4-compatible/],
    ['the unspecified address', 'https://0.0.0.0/', /unspecified/],
    ['carrier-grade NAT', 'https://100.64.1.1/', /carrier-grade NAT/],
    ['multicast', 'https://224.0.0.1/', /multicast/],
    ['link-local IPv6', 'https://[fe80::1]/', /link-local/],
    ['unique-local IPv6', 'https://[fd12:3456::1]/', /unique-local/],
    ['credentials in the URL', 'https://user:pass@example.com/', /user name or password/],
    ['a host that does not resolve', 'https://no-such-host.invalid/', /does not resolve/],
  ])('refuses %s with a clear message on url', async (_name, url, message) => {
    const response = await post<ErrorResponse>(url);
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request', param: 'url' });
    if (message) expect(response.body.error.message).toMatch(message);
  });

  it('accepts a loopback address only because the test allowlist covers 127.0.0.0/8', async () => {
    expect((await post('https://127.0.0.1:4/ok')).status).toBe(201);
    expect((await post('https://127.0.0.2:4/ok')).status).toBe(201);
  });

  it.each([
    ['no events', []],
    ['a duplicate event', ['contact.created', 'contact.created']],
    ['an unknown event', ['call.exploded']],
    ['webhook.test, which cannot be subscribed to', ['webhook.test']],
  ])('refuses %s', async (_name, events) => {
    const response = await post<ErrorResponse>('https://127.0.0.1:4/hooks', events);
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('invalid_request');
    expect(response.body.error.param).toMatch(/^events/);
  });

  it('enforces at most 20 endpoints per org with forbidden', async () => {
    const org = await createTestOrg(env.database.db, { planId: 'scale' });
    const results = await Promise.all(
      Array.from({ length: 22 }, (_, i) => post<ErrorResponse>(`https://127.0.0.1:4/${i}`, undefined, org.key)),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(20);
    const refused = results.filter((r) => r.status !== 201);
    expect(refused).toHaveLength(2);
    for (const response of refused) {
      expect(response.status).toBe(403);
      expect(response.body.error.code).toBe('forbidden');
    }
  });
});

describe('a name that resolves to loopback (no allowlist)', () => {
  let strict: TestApp;
  // A name from /etc/hosts other than localhost that points at loopback (runsc, vm, ... on this machine).
  const hostsName = readFileSync('/etc/hosts', 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*/, '').trim().split(/\s+/))
    .filter(([address]) => address === '127.0.0.1' || address === '::1')
    .flatMap(([, ...names]) => names)
    .find((name) => name !== 'localhost' && !name.endsWith('.localhost'));

  beforeAll(async () => {
    strict = await startTestApp(env.database, { workers: false, config: { webhookPrivateAllowlist: [] } });
  });
  afterAll(async () => {
    await strict?.close();
  });

  it.skipIf(!hostsName)('refuses it after resolving the name', async () => {
    const { error, response } = await strict
      .client(env.org.key)
      .POST('/webhooks', { body: { url: `https://${hostsName}/hooks`, events: ['contact.created'] } });
    expect(response.status).toBe(400);
    expect(error?.error).toMatchObject({ code: 'invalid_request', param: 'url' });
    expect(error?.error.message).toMatch(/resolves to (127\.0\.0\.1|::1), a loopback address/);
  });

  it.each(['https://127.0.0.1:9/hooks', 'https://93.184.216.34:22/hooks', 'https://example.com:0/hooks'])(
    'refuses %s, whose port fetch blocks',
    async (url) => {
      const { error, response } = await strict
        .client(env.org.key)
        .POST('/webhooks', { body: { url, events: ['contact.created'] } });
      expect(response.status).toBe(400);
      expect(error?.error).toMatchObject({ code: 'invalid_request', param: 'url' });
      expect(error?.error.message).toMatch(/^url: must not use port \d+: it is on fetch's list of blocked ports$/);
    },
  );

  it.each(['https://127.0.0.1:4/hooks', 'https://[::ffff:7f00:1]:4/hooks'])(
    'refuses %s without the allowlist',
    async (url) => {
      const { error, response } = await strict
        .client(env.org.key)
        .POST('/webhooks', { body: { url, events: ['contact.created'] } });
      expect(response.status).toBe(400);
      expect(error?.error.message).toMatch(/loopback/);
    },
  );
});

describe('GET /webhooks', () => {
  it('lists newest first with pagination', async () => {
    const org = await createTestOrg(env.database.db, { planId: 'scale' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push((await register(env, `https://127.0.0.1:4/${i}`, undefined, org.key)).id);
    const client = env.app.client(org.key);
    const first = await client.GET('/webhooks', { params: { query: { limit: 2 } } });
    expect(first.data?.data.map((w) => w.id)).toEqual([ids[2], ids[1]]);
    expect(first.data?.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    const second = await client.GET('/webhooks', { params: { query: { limit: 2, offset: 2 } } });
    expect(second.data?.data.map((w) => w.id)).toEqual([ids[0]]);
    expect(second.data?.pagination.has_more).toBe(false);
    for (const item of first.data!.data) {
      expect(item).toHaveProperty('last_delivery_at', null);
      expect(item).toHaveProperty('last_delivery_status', null);
    }
  });
});

describe('PATCH /webhooks/{id}', () => {
  it('replaces events, switches off and on, and switching on clears the failure streak', async () => {
    const { id } = await register(env, 'https://127.0.0.1:4/patch');
    const client = env.app.client(env.org.key);
    const events = await client.PATCH('/webhooks/{id}', {
      params: { path: { id } },
      body: { events: ['call.failed'] },
    });
    expect(events.data?.data.events).toEqual(['call.failed']);
    expect(events.data?.data.active).toBe(true);
    await env.database.db.updateTable('webhooks').set({ failing_since: new Date() }).where('id', '=', id).execute();
    const off = await client.PATCH('/webhooks/{id}', { params: { path: { id } }, body: { active: false } });
    expect(off.data?.data.active).toBe(false);
    const on = await client.PATCH('/webhooks/{id}', { params: { path: { id } }, body: { active: true } });
    expect(on.data?.data.active).toBe(true);
    const row = await env.database.db
      .selectFrom('webhooks')
      .select('failing_since')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.failing_since).toBeNull();
  });

  it('refuses an empty change', async () => {
    const { id } = await register(env, 'https://127.0.0.1:4/patch2');
    const response = await rawRequest(env.app, 'PATCH', `/webhooks/${id}`, {
      headers: { Authorization: `Bearer ${env.org.key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(400);
  });
});

describe('POST /webhooks/{id}/rotate-secret', () => {
  it('returns a new secret once and keeps the old one for 24 hours', async () => {
    const { id, secret } = await register(env, 'https://127.0.0.1:4/rotate');
    const { data, response } = await env.app
      .client(env.org.key)
      .POST('/webhooks/{id}/rotate-secret', { params: { path: { id } } });
    expect(response.status).toBe(200);
    expect(data?.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(data?.secret).not.toBe(secret);
    expect(data?.data.id).toBe(id);
    const row = await env.database.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.previous_secrets).toHaveLength(1);
    expect(row.previous_secrets[0]!.secret).toBe(secret);
    expect(Date.parse(row.previous_secrets[0]!.expires_at) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
  });
});

describe("another org's endpoint", () => {
  it('is not_found for every operation, and stays untouched', async () => {
    const { id } = await register(env, 'https://127.0.0.1:4/mine');
    const delivery = '0a7c3e5f-2b4d-4f6a-8c1e-3d5f7a9b2c4e';
    const auth = { Authorization: `Bearer ${other.key}`, 'content-type': 'application/json' };
    const attempts: Array<[string, string, string?]> = [
      ['GET', `/webhooks/${id}`],
      ['PATCH', `/webhooks/${id}`, '{"active":false}'],
      ['DELETE', `/webhooks/${id}`],
      ['POST', `/webhooks/${id}/test`],
      ['POST', `/webhooks/${id}/rotate-secret`],
      ['GET', `/webhooks/${id}/deliveries`],
      ['POST', `/webhooks/${id}/deliveries/${delivery}/redeliver`],
    ];
    for (const [method, path, body] of attempts) {
      const response = await rawRequest<ErrorResponse>(env.app, method, path, {
        headers: auth,
        ...(body ? { body } : {}),
      });
      expect(response.status, `${method} ${path}`).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    }
    const mine = await env.app.client(env.org.key).GET('/webhooks/{id}', { params: { path: { id } } });
    expect(mine.data?.data.active).toBe(true);
    const list = await env.app.client(other.key).GET('/webhooks');
    expect(list.data?.data).toEqual([]);
  });

  it('answers not_found for an unknown id and deletes a known one with 204', async () => {
    const client = env.app.client(env.org.key);
    const unknown = await client.DELETE('/webhooks/{id}', {
      params: { path: { id: '7d9f2a4c-6e8b-4d1f-9a3c-5e7b9d1f3a5c' } },
    });
    expect(unknown.response.status).toBe(404);
    const { id } = await register(env, 'https://127.0.0.1:4/gone');
    const deleted = await client.DELETE('/webhooks/{id}', { params: { path: { id } } });
    expect(deleted.response.status).toBe(204);
    expect((await client.GET('/webhooks/{id}', { params: { path: { id } } })).response.status).toBe(404);
  });
});
