// Signed delivery to real HTTPS receivers: headers, envelope, signatures checked independently, new
// events picked up at once, test sends, redelivery, invalid payloads, and secret rotation.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { validators } from '../src/contract/validators.js';
import { verifySignature } from '../src/webhooks/delivery/verify.js';
import { connectDatabase } from '../src/database/connect.js';
import { listDeliveryLog } from '../src/webhooks/service.js';
import { insertWebhook } from '../src/webhooks/queries.js';
import { startTestApp } from './support/app.js';
import {
  answer,
  slowly,
  startReceiver,
  testTls,
  type ReceivedRequest,
  type Receiver,
} from './support/webhook-receiver.js';
import { contactCreated, emit, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { parseJson, type Schemas } from './support/json.js';

let env: WebhookEnv;
const receivers: Receiver[] = [];

beforeAll(async () => {
  env = await webhookEnv();
  // A slow sweep, so prompt deliveries can only come from LISTEN/NOTIFY.
  env.worker({ start: true, sweepIntervalMs: 60_000 });
});

afterAll(async () => {
  await env?.close();
});

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}

/** The signature check written out from the product spec, sharing nothing with src/. */
function inlineVerify(request: ReceivedRequest, secret: string): boolean {
  const header = String(request.headers['x-svc-signature']);
  const t = /(?:^|,)t=(\d+)/.exec(header)?.[1];
  const v1s = [...header.matchAll(/v1=([0-9a-f]{64})/g)].map((match) => Buffer.from(match[1]!, 'hex'));
  if (!t || Math.abs(Date.now() - Number(t)) > 300_000) return false;
  const expected = createHmac('sha256', secret).update(`${t}.${request.rawBody}`).digest();
  return v1s.some((v1) => timingSafeEqual(v1, expected));
}

describe('a delivery', () => {
  it('arrives at once with the documented headers, envelope and a valid signature', async () => {
    const target = await receiver();
    const { id: webhookId, secret } = await register(env, target.url);
    const data = contactCreated();
    const emittedAt = Date.now();
    const eventId = await emit(env, 'contact.created', data);
    const [request] = await target.waitFor(1, 3_000);
    // LISTEN/NOTIFY: no waiting for a poll interval.
    expect(request!.receivedAt - emittedAt).toBeLessThan(2_000);

    expect(request!.method).toBe('POST');
    expect(request!.path).toBe('/hooks');
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['x-svc-event']).toBe('contact.created');
    expect(request!.headers['x-svc-delivery']).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    const timestamp = String(request!.headers['x-svc-timestamp']);
    expect(timestamp).toMatch(/^\d{13}$/);
    expect(String(request!.headers['x-svc-signature'])).toMatch(new RegExp(`^t=${timestamp},v1=[0-9a-f]{64}$`));

    const envelope = parseJson<Schemas['WebhookEvent']>(request!.rawBody);
    expect(envelope).toEqual({
      id: eventId,
      event: 'contact.created',
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) as unknown,
      livemode: true,
      data,
    });
    expect(Object.keys(envelope)).toEqual(['id', 'event', 'created_at', 'livemode', 'data']);
    expect(validators.ContactCreatedEvent(envelope)).toBe(true);

    expect(verifySignature(request!.rawBody, String(request!.headers['x-svc-signature']), [secret])).toMatchObject({
      ok: true,
    });
    expect(inlineVerify(request!, secret)).toBe(true);
    expect(inlineVerify({ ...request!, rawBody: request!.rawBody.replace('Asha', 'Asho') }, secret)).toBe(false);
    expect(inlineVerify(request!, 'f'.repeat(64))).toBe(false);

    await expect
      .poll(async () => {
        const { data: list } = await env.app
          .client(env.org.key)
          .GET('/webhooks/{id}/deliveries', { params: { path: { id: webhookId } } });
        return list?.data[0];
      })
      .toMatchObject({
        event_id: eventId,
        event: 'contact.created',
        status: 'succeeded',
        attempt_count: 1,
        next_attempt_at: null,
        attempts: [
          {
            id: request!.headers['x-svc-delivery'],
            attempt: 1,
            status_code: 200,
            failure_kind: null,
            response_excerpt: 'ok',
          },
        ],
      });
    const { data: endpoint } = await env.app
      .client(env.org.key)
      .GET('/webhooks/{id}', { params: { path: { id: webhookId } } });
    expect(endpoint?.data.last_delivery_status).toBe(200);
    expect(endpoint?.data.last_delivery_at).not.toBeNull();
  });

  it('goes only to active endpoints subscribed to the kind, in the same org', async () => {
    const subscribed = await receiver();
    const otherKind = await receiver();
    const switchedOff = await receiver();
    await register(env, subscribed.url, ['call.failed']);
    await register(env, otherKind.url, ['call.completed']);
    const off = await register(env, switchedOff.url, ['call.failed']);
    await env.app
      .client(env.org.key)
      .PATCH('/webhooks/{id}', { params: { path: { id: off.id } }, body: { active: false } });
    await emit(env, 'call.failed', {
      call_id: '2c4e6a8b-0d1f-4a3c-8e5b-7d9f1a3c5e7b',
      provider_call_id: 'sim_1',
      status: 'failed',
      reason: 'carrier_rejected',
    });
    const [request] = await subscribed.waitFor(1);
    expect(request!.headers['x-svc-event']).toBe('call.failed');
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(otherKind.requests).toHaveLength(0);
    expect(switchedOff.requests).toHaveLength(0);
  });

  it('is never sent when its payload breaks the contract: logged as invalid_payload and abandoned', async () => {
    const target = await receiver();
    const { id } = await register(env, target.url);
    const broken = { ...contactCreated(), phone_e164: 'not-a-number' };
    const eventId = await emit(env, 'contact.created', broken);
    await expect
      .poll(async () => (await listDeliveryLog(env.database.db, id, { limit: 10 }))[0]?.failure_kind)
      .toBe('invalid_payload');
    const [entry] = await listDeliveryLog(env.database.db, id, { limit: 10 });
    expect(entry).toMatchObject({ event_id: eventId, attempt: 1, status_code: null });
    expect(entry!.response_excerpt).toMatch(/phone_e164/);
    const { data } = await env.app.client(env.org.key).GET('/webhooks/{id}/deliveries', { params: { path: { id } } });
    expect(data?.data[0]).toMatchObject({ status: 'abandoned', next_attempt_at: null, attempt_count: 1 });
    expect(target.requests).toHaveLength(0);
  });
});

describe('POST /webhooks/{id}/test', () => {
  it('sends a signed webhook.test now and answers with the attempt', async () => {
    const target = await receiver(answer(200, 'ok'));
    const { id, secret } = await register(env, target.url, ['call.completed']);
    const { data, response } = await env.app
      .client(env.org.key)
      .POST('/webhooks/{id}/test', { params: { path: { id } } });
    expect(response.status).toBe(200);
    expect(target.requests).toHaveLength(1);
    const request = target.requests[0]!;
    expect(request.headers['x-svc-event']).toBe('webhook.test');
    expect(inlineVerify(request, secret)).toBe(true);
    const envelope = parseJson<Schemas['WebhookEvent']>(request.rawBody);
    expect(envelope.data).toEqual({ webhook_id: id, message: expect.any(String) as unknown });
    expect(validators.WebhookTestEvent(envelope)).toBe(true);
    expect(data?.data).toMatchObject({
      webhook_id: id,
      event_id: envelope.id,
      event: 'webhook.test',
      status: 'succeeded',
      attempt_count: 1,
      next_attempt_at: null,
      attempts: [{ id: request.headers['x-svc-delivery'], attempt: 1, status_code: 200, failure_kind: null }],
    });
  });

  it('completes concurrent test sends on a 2-connection pool (a test send needs only its own connection)', async () => {
    const small = connectDatabase(env.database.url, { poolSize: 2 });
    const app = await startTestApp(
      { db: small.db, url: env.database.url },
      {
        workers: false,
        config: {
          webhookPrivateAllowlist: env.app.deps.config.webhookPrivateAllowlist,
          webhookCaCerts: env.app.deps.config.webhookCaCerts,
        },
      },
    );
    try {
      // Slow answers keep both lock sessions open while the other sends wait for a connection.
      const target = await receiver(slowly(200));
      const { id } = await register(env, target.url);
      const sends = await Promise.all(
        Array.from({ length: 4 }, () =>
          app.client(env.org.key).POST('/webhooks/{id}/test', { params: { path: { id } } }),
        ),
      );
      expect(sends.map((send) => send.response.status)).toEqual([200, 200, 200, 200]);
      expect(sends.every((send) => send.data?.data.status === 'succeeded')).toBe(true);
      expect(target.requests).toHaveLength(4);
    } finally {
      await app.close();
      await small.db.destroy();
    }
  });

  it('reports a failed test without retrying it, even for a switched-off endpoint', async () => {
    const target = await receiver(answer(500, 'boom'));
    const { id } = await register(env, target.url);
    await env.app.client(env.org.key).PATCH('/webhooks/{id}', { params: { path: { id } }, body: { active: false } });
    const { data } = await env.app.client(env.org.key).POST('/webhooks/{id}/test', { params: { path: { id } } });
    expect(data?.data).toMatchObject({
      status: 'failed',
      next_attempt_at: null,
      attempts: [{ status_code: 500, failure_kind: 'http_status', response_excerpt: 'boom' }],
    });
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(target.requests).toHaveLength(1);
  });

  it('logs a port fetch never contacts (9, on its blocked-port list) as a guard refusal that took no time', async () => {
    // Registration refuses such a port now; an endpoint stored before that rule still gets no request.
    const { id } = await insertWebhook(env.database.db, {
      orgId: env.org.orgId,
      url: 'https://127.0.0.1:9/blocked',
      events: ['contact.created'],
      secret: 'a'.repeat(64),
      now: new Date(),
    });
    const started = Date.now();
    const { data } = await env.app.client(env.org.key).POST('/webhooks/{id}/test', { params: { path: { id } } });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(data?.data).toMatchObject({
      status: 'failed',
      attempts: [
        {
          status_code: null,
          failure_kind: 'guard',
          response_excerpt: "port 9 is on fetch's list of blocked ports; the request was not sent",
        },
      ],
    });
    // The real duration, not the 10-second send timeout.
    expect(data!.data.attempts[0]!.duration_ms).toBeLessThan(1_000);
  });

  it('logs a receiver answering 101 Switching Protocols as a failure it names, not as the HTTP client assertion', async () => {
    // A raw receiver behind TLS: it reads the request's first bytes and answers with the bare status line.
    const tls = await testTls();
    const sockets = new Set<TLSSocket>();
    const raw = createTlsServer({ key: tls.key, cert: tls.cert }, (socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      socket.once('data', () => socket.write('HTTP/1.1 101 Switching Protocols\r\n\r\n'));
    });
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    try {
      const { id } = await register(env, `https://127.0.0.1:${(raw.address() as AddressInfo).port}/hooks`);
      const { data } = await env.app.client(env.org.key).POST('/webhooks/{id}/test', { params: { path: { id } } });
      expect(data?.data).toMatchObject({ status: 'failed', attempts: [{ status_code: null, failure_kind: 'other' }] });
      const excerpt = data!.data.attempts[0]!.response_excerpt;
      expect(excerpt).toMatch(/could not be read as an HTTP response.*101 Switching Protocols/);
      expect(excerpt).not.toMatch(/assert|falsy|==/);
      expect(data!.data.attempts[0]!.duration_ms).toBeLessThan(5_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => raw.close(resolve));
    }
  });
});

describe('POST /webhooks/{id}/deliveries/{delivery_id}/redeliver', () => {
  it('queues the same event again and the worker sends it with the same id and body', async () => {
    const target = await receiver();
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    const [first] = await target.waitFor(1);
    const client = env.app.client(env.org.key);
    await expect
      .poll(async () => {
        const { data } = await client.GET('/webhooks/{id}/deliveries', { params: { path: { id } } });
        return data?.data[0]?.status;
      })
      .toBe('succeeded');
    const { data: list } = await client.GET('/webhooks/{id}/deliveries', { params: { path: { id } } });
    const deliveryId = list!.data[0]!.id;
    const { data, response } = await client.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
      params: { path: { id, delivery_id: deliveryId } },
    });
    expect(response.status).toBe(202);
    expect(data?.data).toMatchObject({
      status: 'pending',
      attempt_count: 0,
      attempts: [],
      event_id: list!.data[0]!.event_id,
    });
    expect(data?.data.id).not.toBe(deliveryId);
    const [, second] = await target.waitFor(2);
    expect(second!.rawBody).toBe(first!.rawBody);
    expect(second!.headers['x-svc-delivery']).not.toBe(first!.headers['x-svc-delivery']);
  });

  it('refuses a switched-off endpoint with invalid_state and an unknown delivery with not_found', async () => {
    const target = await receiver();
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    await target.waitFor(1);
    const client = env.app.client(env.org.key);
    const { data: list } = await client.GET('/webhooks/{id}/deliveries', { params: { path: { id } } });
    const unknown = await client.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
      params: { path: { id, delivery_id: '0a7c3e5f-2b4d-4f6a-8c1e-3d5f7a9b2c4e' } },
    });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error?.error.param).toBe('delivery_id');
    await client.PATCH('/webhooks/{id}', { params: { path: { id } }, body: { active: false } });
    const refused = await client.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
      params: { path: { id, delivery_id: list!.data[0]!.id } },
    });
    expect(refused.response.status).toBe(409);
    expect(refused.error?.error.code).toBe('invalid_state');
  });
});

describe('GET /webhooks/{id}/deliveries', () => {
  it('pages newest first and filters by status', async () => {
    const target = await receiver();
    const { id } = await register(env, target.url);
    const ids: string[] = [];
    for (let i = 0; i < 3; i += 1) ids.push(await emit(env, 'contact.created', contactCreated(`Name ${i}`)));
    await target.waitFor(3);
    const client = env.app.client(env.org.key);
    await expect
      .poll(async () => {
        const { data } = await client.GET('/webhooks/{id}/deliveries', {
          params: { path: { id }, query: { status: 'succeeded' } },
        });
        return data?.pagination.total;
      })
      .toBe(3);
    const { data } = await client.GET('/webhooks/{id}/deliveries', { params: { path: { id }, query: { limit: 2 } } });
    expect(data?.data.map((d) => d.event_id)).toEqual([ids[2], ids[1]]);
    expect(data?.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    const pending = await client.GET('/webhooks/{id}/deliveries', {
      params: { path: { id }, query: { status: 'pending' } },
    });
    expect(pending.data?.data).toEqual([]);
  });
});
