// Secrets stay secret. A full run of the real server process at LOG_LEVEL=debug (webhooks registered
// and rotated, test sends, deliveries that succeed and fail, calls to every ending, keys misused in
// every place a client might paste one) never writes an API key, a key's secret part or a webhook
// secret to its output, and no error answer contains one. Responses carry the security headers.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { rawExchange } from './support/raw-http.js';
import {
  killServerProcesses,
  serverEnvironment,
  startServerProcess,
  type ServerProcess,
} from './support/server-process.js';
import { answer, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { issueApiKey } from '../src/orgs/api-keys.js';
import { revokeKey } from '../src/orgs/api-key-queries.js';
import { parseJson } from './support/json.js';

const FULL_KEY = /svc_(?:live|test)_[a-z0-9]{8}_[A-Za-z0-9]{32}/;
const TERMINAL = ['completed', 'failed', 'no_answer', 'busy', 'canceled'];

let database: TestDatabase;
const receivers: Receiver[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  killServerProcesses();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await database?.drop();
});

/** Every form of a secret that must never leak: the value itself and, for keys, the secret part and its stored hash. */
function forms(secret: string): string[] {
  const part = /^svc_(?:live|test)_[a-z0-9]{8}_([A-Za-z0-9]{32})$/.exec(secret)?.[1];
  return part ? [secret, part, createHash('sha256').update(part).digest('hex')] : [secret];
}

describe('a full run at LOG_LEVEL=debug', () => {
  it('never shows an API key or a webhook secret in the logs or in an error answer', { timeout: 90_000 }, async () => {
    const ok = await startReceiver(answer(200, 'ok'));
    const failing = await startReceiver(answer(500, 'nope'));
    receivers.push(ok, failing);
    const a = await createTestOrg(database.db, { planId: 'scale' });
    const b = await createTestOrg(database.db, { planId: 'scale' });
    const revoked = (await issueApiKey(database.db, a.orgId)).key;
    await revokeKey(database.db, revoked.split('_')[2]!, new Date());
    const secrets = [a.key, b.key, revoked];
    const errorBodies: string[] = [];
    const cleanBodies: string[] = [];

    const server: ServerProcess = await startServerProcess(
      await serverEnvironment(database.url, { LOG_LEVEL: 'debug', SIMULATOR_STEP_MS: '20', API_KEY_CACHE_TTL_MS: '0' }),
    );
    const call = async (
      key: string | null,
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ) => {
      const response = await fetch(`${server.apiUrl}${path}`, {
        method,
        headers: {
          ...(key ? { Authorization: `Bearer ${key}` } : {}),
          ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          ...headers,
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const text = await response.text();
      if (response.status >= 400) errorBodies.push(text);
      // The bodies read here: a new endpoint with its secret, a rotated secret, a call.
      return {
        status: response.status,
        text,
        json: text ? parseJson<{ secret: string; data: { id: string } }>(text) : null,
      };
    };

    // Endpoints and their secrets, one of them rotated; a test send to each.
    const created = [];
    for (const [key, url] of [
      [a.key, ok.url],
      [a.key, failing.url],
      [b.key, ok.url],
    ] as const) {
      const response = await call(key, 'POST', '/webhooks', {
        url,
        events: ['call.completed', 'call.failed', 'call.no_answer', 'call.busy', 'call.canceled', 'contact.created'],
      });
      expect(response.status).toBe(201);
      secrets.push(response.json!.secret);
      created.push({ key, id: response.json!.data.id });
    }
    const rotated = await call(a.key, 'POST', `/webhooks/${created[0]!.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    secrets.push(rotated.json!.secret);
    for (const { key, id } of created) expect((await call(key, 'POST', `/webhooks/${id}/test`)).status).toBe(200);

    // Traffic that emits events: a contact, a call to every simulated ending, a cancel, an idempotent replay.
    expect(
      (
        await call(a.key, 'POST', '/contacts', {
          phone_e164: testNumber('1111'),
          name: 'Asha',
          consent_capture: 'manual',
        })
      ).status,
    ).toBe(201);
    const callIds: string[] = [];
    for (const ending of ['7777', '0001', '0002', '0003', '0004', '0005']) {
      const placed = await call(a.key, 'POST', '/calls', { agent_id: a.agentId, to_e164: testNumber(ending) });
      expect(placed.status).toBe(ending === '0005' ? 502 : 201);
      if (placed.status === 201) callIds.push(placed.json!.data.id);
    }
    const canceled = await call(a.key, 'POST', '/calls', { agent_id: a.agentId, to_e164: testNumber('8888') });
    callIds.push(canceled.json!.data.id);
    await call(a.key, 'POST', `/calls/${canceled.json!.data.id}/cancel`);
    const replayedBody = { agent_id: a.agentId, to_e164: testNumber('9999') };
    for (let i = 0; i < 2; i += 1) {
      const replayed = await call(a.key, 'POST', '/calls', replayedBody, { 'Idempotency-Key': 'secrets-run' });
      expect(replayed.status).toBe(201);
      if (i === 0) callIds.push(replayed.json!.data.id);
    }

    // Keys and secrets where they do not belong.
    const [prefix] = /^svc_live_[a-z0-9]{8}_/.exec(a.key)!;
    const misuse: Array<[number, Promise<{ status: number }>]> = [
      [401, call(`${prefix}${'Z'.repeat(32)}`, 'GET', '/calls')],
      [401, call(revoked, 'GET', '/calls')],
      [401, call(secrets[3]!, 'GET', '/calls')],
      [401, call(null, 'GET', '/calls', undefined, { 'X-Api-Key': a.key })],
      [400, call(a.key, 'GET', `/calls?api_key=${a.key}`)],
      [400, call(a.key, 'GET', `/calls/${a.key}`)],
      [400, call(a.key, 'GET', `/webhooks/${secrets[3]}`)],
      [
        400,
        call(a.key, 'POST', '/contacts', { phone_e164: testNumber('2222'), consent_capture: 'manual', api_key: a.key }),
      ],
      [
        400,
        call(a.key, 'POST', '/webhooks', {
          url: `https://user:${secrets[3]}@127.0.0.1:4/x`,
          events: ['call.completed'],
        }),
      ],
      [
        201,
        call(
          a.key,
          'POST',
          '/calls',
          { agent_id: a.agentId, to_e164: testNumber('3333') },
          { 'Idempotency-Key': a.key },
        ),
      ],
    ];
    for (const [status, sent] of misuse) expect((await sent).status).toBe(status);

    // Reads: the secret is shown once, at creation or rotation, and never again.
    for (const path of [
      '/webhooks',
      ...created.slice(0, 2).flatMap(({ id }) => [`/webhooks/${id}`, `/webhooks/${id}/deliveries`]),
      '/calls',
      '/contacts',
    ]) {
      const response = await call(a.key, 'GET', path);
      expect(response.status).toBe(200);
      cleanBodies.push(response.text);
    }

    // Let the calls end and every delivery be tried at least once, then stop the server.
    await waitFor(
      'calls to end and deliveries to be tried',
      async () => {
        const calls = await database.db.selectFrom('calls').select('status').where('id', 'in', callIds).execute();
        const untried = await database.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('attempt_count', '=', 0)
          .where('status', '=', 'pending')
          .execute();
        return calls.every((row) => TERMINAL.includes(row.status)) && untried.length === 0;
      },
      30_000,
    );
    await server.stop('SIGTERM');

    const output = server.output();
    const leaks = secrets
      .flatMap(forms)
      .filter((form) => output.includes(form) || errorBodies.some((body) => body.includes(form)));
    expect(leaks).toEqual([]);
    expect(output).not.toMatch(FULL_KEY);
    for (const body of errorBodies) expect(body).not.toMatch(FULL_KEY);
    for (const body of cleanBodies) for (const secret of secrets) expect(body).not.toContain(secret);
    // The scan is not vacuous: every request was logged (with the status actually sent), and so were the failing deliveries.
    expect(output.match(/"msg":"request"/g)!.length).toBeGreaterThanOrEqual(30);
    for (const status of [200, 201, 400, 401, 502]) expect(output).toContain(`"status":${status},`);
    expect(output).toContain('"path":"/api/v1/calls/svc_live_');
    expect(output).toContain('webhook attempt failed');
    expect(errorBodies.length).toBeGreaterThanOrEqual(misuse.length - 1);
  });
});

describe('security headers', () => {
  let app: TestApp;
  let org: TestOrg;

  beforeAll(async () => {
    app = await startTestApp(database, { workers: false });
    org = await createTestOrg(database.db);
  });

  afterAll(async () => {
    await app?.close();
  });

  const API_HEADERS = {
    'content-security-policy': "default-src 'none';frame-ancestors 'none'",
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': 'no-store',
  };
  // What only a rendered document uses: sent with the web pages, not with JSON answers.
  const DOCUMENT_HEADERS = {
    'cross-origin-opener-policy': 'same-origin',
    'origin-agent-cluster': '?1',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0',
  };

  it.each([
    ['a success', 'GET', '/api/v1/calls', true],
    ['an error', 'GET', '/api/v1/calls/not-a-uuid', true],
    ['an unauthenticated request', 'GET', '/api/v1/calls', false],
    ['an unknown route', 'GET', '/nowhere', true],
    ['a wrong method', 'DELETE', '/api/v1/calls', true],
    ['a probe', 'GET', '/readyz', false],
    ['the published spec', 'GET', '/api/v1/openapi.json', false],
  ])("%s carries the API's headers and none only a document uses", async (_name, method, path, authenticated) => {
    const response = await fetch(`${app.baseUrl}${path}`, {
      method,
      headers: authenticated ? { Authorization: `Bearer ${org.key}` } : {},
    });
    for (const [name, value] of Object.entries(API_HEADERS)) expect(response.headers.get(name), name).toBe(value);
    for (const name of [...Object.keys(DOCUMENT_HEADERS), 'referrer-policy']) {
      expect(response.headers.get(name), name).toBeNull();
    }
    expect(response.headers.get('strict-transport-security')).toMatch(/^max-age=\d+/);
    expect(response.headers.get('x-powered-by')).toBeNull();
  });

  it.each(['/docs', '/dashboard/login', '/Dashboard/login'])(
    'the page %s gets every header a document uses',
    async (path) => {
      const response = await fetch(`${app.baseUrl}${path}`);
      expect(response.status).toBe(200);
      for (const [name, value] of Object.entries(DOCUMENT_HEADERS))
        expect(response.headers.get(name), name).toBe(value);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toMatch(/^(no-referrer|same-origin)$/);
    },
  );

  it('the docs page keeps its own Content-Security-Policy', async () => {
    const response = await fetch(`${app.baseUrl}/docs`);
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self' 'unsafe-eval'");
  });

  it('a request the HTTP parser refuses is answered in the envelope with nosniff (src/http/server.ts)', async () => {
    const { createApp, requestListener } = await import('../src/app.js');
    const { answerClientErrors } = await import('../src/http/server.js');
    const http = await import('node:http');
    const server = http.createServer(requestListener(await createApp(app.deps)));
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const refused = await rawExchange(port, 'GET /api/v1/calls HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0000b\r\n\r\n');
      expect(refused.status).toBe(400);
      expect(refused.headers['x-content-type-options']).toBe('nosniff');
      expect(JSON.parse(refused.body)).toEqual({
        error: { code: 'invalid_request', message: expect.any(String) as unknown },
      });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
