// Promises kept at their edges: plan changes within the revocation bound (placements at once), every
// replaced secret signing for its full 24 hours whatever rotations follow, the rate limit's Retry-After
// always from 1 to 60 and honest, and bodies that are not what they claim (bytes that are not UTF-8, a
// `__proto__` key, an unknown Content-Encoding, a body sent too slowly or to a caller not authenticated).
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlan } from '../src/orgs/service.js';
import { verifySignature } from '../src/webhooks/delivery/verify.js';
import { createTestOrg, ManualClock, rawRequest, startTestApp, type TestApp } from './support/app.js';
import { jsonBody, parseJson, type ErrorResponse, type Schemas } from './support/json.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { answer, startReceiver, testTls, type Receiver } from './support/webhook-receiver.js';

let database: TestDatabase;
const apps: TestApp[] = [];
const receivers: Receiver[] = [];
const log: Array<{ level: number; msg: string }> = [];

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await database?.drop();
});

async function app(options: Parameters<typeof startTestApp>[1] = {}): Promise<TestApp> {
  const started = await startTestApp(database, {
    workers: false,
    ...options,
    logStream: { write: (line: string) => void log.push(parseJson(line)) },
    config: {
      logLevel: 'info',
      webhookPrivateAllowlist: ['127.0.0.0/8'],
      webhookCaCerts: [(await testTls()).caCert],
      ...options.config,
    },
  });
  apps.push(started);
  return started;
}

const bearer = (key: string, extra: Record<string, string> = {}) => ({
  Authorization: `Bearer ${key}`,
  'Content-Type': 'application/json',
  ...extra,
});

describe('a plan change', () => {
  it('stops placements at once, and reaches the rate limit within the key cache bound', async () => {
    const clock = new ManualClock();
    const cached = await app({ clock, config: { apiKeyCacheTtlMs: 30_000 } });
    const org = await createTestOrg(database.db);
    const place = () =>
      rawRequest<ErrorResponse>(cached, 'POST', '/calls', {
        headers: bearer(org.key),
        body: JSON.stringify({ agent_id: org.agentId, to_e164: '+919812345678' }),
      });
    expect((await place()).status).toBe(201);
    await setPlan(database.db, org.orgId, null);
    const refused = await place();
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');

    await setPlan(database.db, org.orgId, 'scale');
    const before = await rawRequest(cached, 'GET', '/calls', { headers: bearer(org.key) });
    expect(before.headers.get('x-ratelimit-limit')).toBe('120');
    clock.advance(30_001);
    const after = await rawRequest(cached, 'GET', '/calls', { headers: bearer(org.key) });
    expect(after.headers.get('x-ratelimit-limit')).toBe('1200');
  });
});

describe('secret rotation', () => {
  it('keeps every replaced secret signing for 24 hours, even through concurrent rotations, up to a cap', async () => {
    const clock = new ManualClock();
    const rotating = await app({ clock });
    const org = await createTestOrg(database.db, { planId: 'scale' });
    const receiver = await startReceiver(answer(200));
    receivers.push(receiver);
    const created = await rawRequest<Schemas['WebhookSecretResponse']>(rotating, 'POST', '/webhooks', {
      headers: bearer(org.key),
      body: JSON.stringify({ url: receiver.url, events: ['contact.created'] }),
    });
    const id = created.body.data.id;
    // A rotation answers the new secret, unless the caller declares it expects an error.
    const rotate = <T = Schemas['WebhookSecretResponse']>() =>
      rawRequest<T>(rotating, 'POST', `/webhooks/${id}/rotate-secret`, { headers: bearer(org.key) });
    const secrets = [created.body.secret];
    secrets.push((await rotate()).body.secret);
    const concurrent = await Promise.all([rotate(), rotate()]);
    for (const rotated of concurrent) {
      expect(rotated.status).toBe(200);
      secrets.push(rotated.body.secret);
    }

    // One test delivery: signed by the current secret and by each of the three replaced ones.
    const sendTest = async () => {
      expect((await rawRequest(rotating, 'POST', `/webhooks/${id}/test`, { headers: bearer(org.key) })).status).toBe(
        200,
      );
      return receiver.requests.at(-1)!;
    };
    const delivery = await sendTest();
    const header = String(delivery.headers['x-svc-signature']);
    expect(header.match(/v1=/g)).toHaveLength(4);
    for (const secret of secrets) {
      expect(verifySignature(delivery.rawBody, header, [secret], clock.now().getTime()).ok, secret).toBe(true);
    }

    // A fourth replaced secret fits; a fifth is refused while the others are in their grace period.
    secrets.push((await rotate()).body.secret);
    const refused = await rotate<ErrorResponse>();
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('invalid_state');
    // The refusal names the way past it for a secret that leaked.
    expect(refused.body.error.message).toContain('expire_previous=true');

    // A day later the replaced secrets are gone, and rotating works again.
    clock.advance(24 * 3_600_000 + 1_000);
    const latest = (await rotate()).body.secret;
    const later = await sendTest();
    const laterHeader = String(later.headers['x-svc-signature']);
    expect(laterHeader.match(/v1=/g)).toHaveLength(2);
    expect(verifySignature(later.rawBody, laterHeader, [latest], clock.now().getTime()).ok).toBe(true);
    expect(verifySignature(later.rawBody, laterHeader, [secrets.at(-1)!], clock.now().getTime()).ok).toBe(true);
    expect(verifySignature(later.rawBody, laterHeader, [secrets[0]!], clock.now().getTime()).ok).toBe(false);
  });
});

describe('the rate limit', () => {
  it('answers a Retry-After from 1 to 60 that is exactly long enough, whenever the requests came', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 25, 12, 0, 0, 0));
    const limited = await app({ clock });
    const org = await createTestOrg(database.db);
    for (let round = 0; round < 3; round += 1) {
      // 120 requests spread unevenly over less than 59 seconds.
      for (let i = 0; i < 120; i += 1) {
        expect((await rawRequest(limited, 'GET', '/contacts', { headers: bearer(org.key) })).status).toBe(200);
        clock.advance(Math.floor(Math.random() * 490));
      }
      const refused = await rawRequest(limited, 'GET', '/contacts', { headers: bearer(org.key) });
      expect(refused.status).toBe(429);
      const wait = Number(refused.headers.get('retry-after'));
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(60);
      expect(Number(refused.headers.get('x-ratelimit-reset'))).toBeLessThanOrEqual(60);
      clock.advance(wait * 1000);
      expect((await rawRequest(limited, 'GET', '/contacts', { headers: bearer(org.key) })).status).toBe(200);
      clock.advance(60_000);
    }
  });
});

/** Sends raw bytes on a new connection and returns what came back when the server closed it (or after `waitMs`). */
async function rawExchange(port: number, chunks: Array<string | Buffer>, waitMs: number): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (data) => (received += data.toString()));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  for (const chunk of chunks) socket.write(chunk);
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, waitMs))]);
  socket.destroy();
  return received;
}

describe('bodies that are not what they claim', () => {
  it('refuses bytes that are not UTF-8, a __proto__ key and an unknown Content-Encoding, with clear errors', async () => {
    const plain = await app();
    const org = await createTestOrg(database.db);
    const post = (body: string | Uint8Array, headers: Record<string, string> = {}) =>
      fetch(`${plain.apiUrl}/contacts`, {
        method: 'POST',
        headers: bearer(org.key, headers),
        body: body as BodyInit,
      }).then(async (response) => ({ status: response.status, body: await jsonBody<ErrorResponse>(response) }));
    const before = log.length;

    const latin1 = await post(
      Buffer.concat([
        Buffer.from('{"phone_e164":"+919812000001","name":"Jos'),
        Buffer.from([0xe9]),
        Buffer.from('","consent_capture":"manual"}'),
      ]),
    );
    expect(latin1.status).toBe(400);
    expect(latin1.body.error).toMatchObject({
      code: 'invalid_request',
      param: 'body',
      message: 'body: is not valid UTF-8',
    });

    const proto = await post('{"phone_e164":"+919812000002","consent_capture":"manual","metadata":{"__proto__":"x"}}');
    expect(proto.status).toBe(400);
    expect(proto.body.error).toMatchObject({ code: 'invalid_request', param: 'metadata.__proto__' });
    expect(proto.body.error.message).toContain('reserved key name');

    const zstd = await post('{}', { 'Content-Encoding': 'zstd' });
    expect(zstd.status).toBe(415);
    expect(zstd.body.error).toMatchObject({ code: 'unsupported_media_type', param: 'Content-Encoding' });

    const gzipped = await post(gzipSync('{"phone_e164":"+919812000003","consent_capture":"manual"}'), {
      'Content-Encoding': 'gzip',
    });
    expect(gzipped.status).toBe(201);

    // None of them was an unexpected error.
    expect(log.slice(before).filter((line) => line.level >= 50)).toEqual([]);
  });

  it('answers a stalled body 408 even when the request deadline is no longer than the body timeout', async () => {
    // The defaults are 10 s each: the time the body takes to arrive must not count toward the deadline.
    const even = await app({ config: { bodyTimeoutMs: 800, requestTimeoutMs: 800, headersTimeoutMs: 2_000 } });
    const org = await createTestOrg(database.db);
    const port = Number(new URL(even.baseUrl).port);
    const stalled = await rawExchange(
      port,
      [
        `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\nContent-Length: 64\r\n\r\n{`,
      ],
      5_000,
    );
    expect(stalled).toMatch(/^HTTP\/1\.1 408 /);
    expect(stalled).toContain('"code":"request_timeout"');
  });

  it('answers a body that does not arrive in time 408, and never reads the body of a caller not authenticated', async () => {
    const slow = await app({ config: { bodyTimeoutMs: 500, headersTimeoutMs: 1_000 } });
    const org = await createTestOrg(database.db);
    const port = Number(new URL(slow.baseUrl).port);
    const head = (key: string) =>
      `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"phone`;

    const started = Date.now();
    const timedOut = await rawExchange(port, [head(org.key)], 5_000);
    expect(timedOut).toMatch(/^HTTP\/1\.1 408 /);
    expect(timedOut).toContain('"code":"request_timeout"');
    expect(timedOut.toLowerCase()).toContain('connection: close');
    expect(Date.now() - started).toBeLessThan(3_000);

    const refused = await rawExchange(port, [head('svc_live_aaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb')], 3_000);
    expect(refused).toMatch(/^HTTP\/1\.1 401 /);
    expect(refused.toLowerCase()).toContain('connection: close');

    // Refused by the routes, before any key is read: a wrong method and an unknown path.
    const partial = (line: string) =>
      `${line} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"phone`;
    const wrongMethod = await rawExchange(port, [partial('PUT /api/v1/contacts')], 3_000);
    expect(wrongMethod).toMatch(/^HTTP\/1\.1 405 /);
    expect(wrongMethod.toLowerCase()).toContain('connection: close');
    const unknownPath = await rawExchange(port, [partial('POST /api/v1/nothing-here')], 3_000);
    expect(unknownPath).toMatch(/^HTTP\/1\.1 404 /);
    expect(unknownPath.toLowerCase()).toContain('connection: close');

    // Headers that never end get 408 in the envelope too.
    const headers = await rawExchange(port, ['GET /api/v1/calls HTTP/1.1\r\nHost: x\r\n'], 5_000);
    expect(headers).toMatch(/^HTTP\/1\.1 408 /);
    expect(headers).toContain('"code":"request_timeout"');
  });
});
