// Retries, failure kinds, the delivery log, secret rotation and automatic switch-off, driven by a
// ManualClock and explicit worker sweeps (runOnce) against real HTTPS receivers.
import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { emitEvents } from '../src/webhooks/outbox.js';
import { DeliveryWorker } from '../src/webhooks/delivery/worker.js';
import { verifySignature } from '../src/webhooks/delivery/verify.js';
import { listDeliveryLog } from '../src/webhooks/service.js';
import { createDeliveryRuntime } from '../src/webhooks/delivery/runtime.js';
import { ManualClock } from './support/app.js';
import {
  answer,
  hugeBody,
  reset,
  startReceiver,
  untrustedTls,
  type Behaviour,
  type Receiver,
} from './support/webhook-receiver.js';
import { contactCreated, emit, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

let clock: ManualClock;
let env: WebhookEnv;
let worker: DeliveryWorker;
const receivers: Receiver[] = [];

beforeEach(async () => {
  // Well ahead of the database clock, so deliveries queued with now() are due at once.
  clock = new ManualClock(Date.now() + 10 * MINUTE);
  env = await webhookEnv({ clock });
  worker = env.worker();
});

afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  await env.close();
});

async function receiver(behaviour: Behaviour, tls?: { key: string; cert: string }): Promise<Receiver> {
  const started = await startReceiver(behaviour, tls);
  receivers.push(started);
  return started;
}

async function deliveriesOf(id: string) {
  const { data } = await env.app.client(env.org.key).GET('/webhooks/{id}/deliveries', { params: { path: { id } } });
  return data!.data;
}

async function endpoint(id: string) {
  const { data } = await env.app.client(env.org.key).GET('/webhooks/{id}', { params: { path: { id } } });
  return data!.data;
}

describe('the retry schedule', () => {
  it('retries after 1 min, 5 min, 15 min, 1 h, 4 h and 12 h, then abandons after the 7th attempt', async () => {
    const target = await receiver(answer(500, 'down'));
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    expect(await worker.runOnce()).toBe(1);
    for (const [index, delay] of [MINUTE, 5 * MINUTE, 15 * MINUTE, HOUR, 4 * HOUR, 12 * HOUR].entries()) {
      const [delivery] = await deliveriesOf(id);
      expect(delivery).toMatchObject({ status: 'pending', attempt_count: index + 1 });
      expect(Date.parse(delivery!.next_attempt_at!) - Date.parse(delivery!.attempts[0]!.attempted_at)).toBe(delay);
      clock.advance(delay - 1);
      expect(await worker.runOnce()).toBe(0);
      clock.advance(1);
      expect(await worker.runOnce()).toBe(1);
    }
    const [delivery] = await deliveriesOf(id);
    expect(delivery).toMatchObject({ status: 'abandoned', attempt_count: 7, next_attempt_at: null });
    expect(delivery!.attempts.map((attempt) => attempt.attempt)).toEqual([7, 6, 5, 4, 3, 2, 1]);
    expect(target.requests).toHaveLength(7);
    // The same bytes every time, a new x-svc-delivery each time.
    expect(new Set(target.requests.map((request) => request.rawBody)).size).toBe(1);
    expect(new Set(target.requests.map((request) => request.headers['x-svc-delivery'])).size).toBe(7);
    clock.advance(2 * DAY);
    expect(await worker.runOnce()).toBe(0);
  });

  it('ends the failure streak on a success', async () => {
    let calls = 0;
    const target = await receiver((request, response) => answer(++calls === 1 ? 502 : 204)(request, response));
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    const failing = await env.database.db
      .selectFrom('webhooks')
      .select('failing_since')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(failing.failing_since).not.toBeNull();
    clock.advance(MINUTE);
    await worker.runOnce();
    const healthy = await env.database.db
      .selectFrom('webhooks')
      .select('failing_since')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(healthy.failing_since).toBeNull();
    expect((await deliveriesOf(id))[0]).toMatchObject({ status: 'succeeded', attempt_count: 2 });
    expect((await endpoint(id)).last_delivery_status).toBe(204);
  });

  it.each([
    ['429 with Retry-After seconds', 429, () => '120', 120_000],
    [
      '503 with Retry-After as an HTTP date',
      503,
      () => new Date(Math.ceil((clock.now().getTime() + 30 * MINUTE) / 1000) * 1000).toUTCString(),
      null,
    ],
    ['429 asking for a day (as long as the 24-hour window leaves)', 429, () => String(24 * 3600), 'window'],
    ['503 asking for less than the schedule (schedule instead)', 503, () => '2', MINUTE],
    ['500 with Retry-After (ignored)', 500, () => '5', MINUTE],
  ])('honours %s', async (_name, status, retryAfter, expectedDelay) => {
    const header = retryAfter();
    const target = await receiver(answer(status, 'later', { 'retry-after': header }));
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    const [delivery] = await deliveriesOf(id);
    const attemptedAt = Date.parse(delivery!.attempts[0]!.attempted_at);
    const due = Date.parse(delivery!.next_attempt_at!);
    if (expectedDelay === null) expect(due).toBe(Date.parse(header));
    // The schedule's later steps (17 h 20 min) must still fit in the 24 hours after the delivery was queued.
    else if (expectedDelay === 'window') expect(due - Date.parse(delivery!.created_at)).toBe(400 * MINUTE);
    else expect(due - attemptedAt).toBe(expectedDelay);
  });
});

describe('failure kinds', () => {
  it('logs each kind of failing receiver with its status or failure kind', async () => {
    const elsewhere = await receiver(answer(200));
    const redirect = await receiver(answer(302, 'moved', { location: elsewhere.url }));
    const notFound = await receiver(answer(404, 'no such hook'));
    const unavailable = await receiver(answer(503, 'maintenance'));
    const resetting = await receiver(reset);
    const untrusted = await receiver(answer(200), await untrustedTls());
    const closed = await receiver(answer(200));
    await closed.close();
    const huge = await receiver(hugeBody(50));
    const ids = {
      redirect: (await register(env, redirect.url)).id,
      notFound: (await register(env, notFound.url)).id,
      unavailable: (await register(env, unavailable.url)).id,
      reset: (await register(env, resetting.url)).id,
      tls: (await register(env, untrusted.url)).id,
      refused: (await register(env, closed.url)).id,
      huge: (await register(env, huge.url)).id,
      dns: (await register(env, `https://127.0.0.1:4/dns`)).id,
    };
    await env.database.db
      .updateTable('webhooks')
      .set({ url: 'https://no-such-host.invalid/hooks' })
      .where('id', '=', ids.dns)
      .execute();
    await emit(env, 'contact.created', contactCreated());
    const started = Date.now();
    await worker.runOnce();
    expect(Date.now() - started).toBeLessThan(5_000);

    const last = async (id: string) => (await listDeliveryLog(env.database.db, id, { limit: 1 }))[0]!;
    expect(await last(ids.redirect)).toMatchObject({
      status_code: 302,
      failure_kind: 'http_status',
      response_excerpt: 'moved',
    });
    expect(elsewhere.requests).toHaveLength(0);
    expect(await last(ids.notFound)).toMatchObject({
      status_code: 404,
      failure_kind: 'http_status',
      response_excerpt: 'no such hook',
    });
    expect(await last(ids.unavailable)).toMatchObject({ status_code: 503, failure_kind: 'http_status' });
    expect(await last(ids.reset)).toMatchObject({ status_code: null, failure_kind: 'connection_reset' });
    expect(await last(ids.tls)).toMatchObject({
      status_code: null,
      failure_kind: 'tls',
      // In the receiver owner's terms, without the TLS library's advice about this server's runtime.
      response_excerpt: "TLS handshake failed: the receiver's certificate is self-signed (DEPTH_ZERO_SELF_SIGNED_CERT)",
    });
    expect(untrusted.requests).toHaveLength(0);
    expect(await last(ids.refused)).toMatchObject({ status_code: null, failure_kind: 'connection_refused' });
    expect(await last(ids.dns)).toMatchObject({ status_code: null, failure_kind: 'dns' });
    const huge200 = await last(ids.huge);
    expect(huge200).toMatchObject({ status_code: 200, failure_kind: null });
    expect(huge200.response_excerpt).toBe('x'.repeat(500));
    expect(huge200.duration_ms).toBeLessThan(2_000);
    for (const id of Object.values(ids).filter((id) => id !== ids.huge)) {
      expect((await deliveriesOf(id))[0]).toMatchObject({ status: 'pending', attempt_count: 1 });
    }
    expect((await endpoint(ids.reset)).last_delivery_status).toBeNull();
    expect((await endpoint(ids.notFound)).last_delivery_status).toBe(404);
  });

  it('re-applies the address guard at connect time (an address allowed at registration is refused later)', async () => {
    const target = await receiver(answer(200));
    const { id } = await register(env, target.url);
    const strictConfig = { ...env.app.deps.config, webhookPrivateAllowlist: [] };
    const { db, logger } = env.app.deps;
    const strictDeps = {
      ...env.app.deps,
      config: strictConfig,
      delivery: createDeliveryRuntime(db, strictConfig, logger, 'strict'),
    };
    const strict = new DeliveryWorker(strictDeps, { listenUrl: null });
    try {
      await emit(env, 'contact.created', contactCreated());
      await strict.runOnce();
    } finally {
      await strict.stop(0);
      await strictDeps.delivery.close();
    }
    expect(target.requests).toHaveLength(0);
    const [entry] = await listDeliveryLog(env.database.db, id, { limit: 1 });
    expect(entry).toMatchObject({ failure_kind: 'guard', status_code: null });
    expect(entry!.response_excerpt).toMatch(/127\.0\.0\.1.*loopback/);
  });
});

describe('the delivery log', () => {
  it('keeps exactly the last 100 attempts per endpoint with 500-character excerpts', async () => {
    const target = await receiver(answer(500, 'e'.repeat(700)));
    const neighbour = await receiver(answer(500, 'n'));
    const { id } = await register(env, target.url);
    const { id: neighbourId } = await register(env, neighbour.url);
    await env.database.db.transaction().execute((trx) =>
      emitEvents(
        trx,
        env.org.orgId,
        'contact.created',
        Array.from({ length: 105 }, (_, i) => contactCreated(`N${i}`)),
        null,
      ),
    );
    expect(await worker.runOnce()).toBeGreaterThan(0);
    // A pass may end while a claim that its finished attempts chained is still to start: run passes
    // until one finds nothing due, so every first attempt has been made whatever the timing.
    while ((await worker.runOnce()) > 0) await Promise.resolve();
    expect(target.requests).toHaveLength(105);
    const log = await listDeliveryLog(env.database.db, id, { limit: 1_000 });
    expect(log).toHaveLength(100);
    for (const entry of log) expect(entry.response_excerpt).toBe('e'.repeat(500));
    const seqs = log.map((entry) => entry.seq);
    expect([...seqs].sort((a, b) => b - a)).toEqual(seqs);
    // The neighbour's log is its own.
    expect(await listDeliveryLog(env.database.db, neighbourId, { limit: 1_000 })).toHaveLength(100);

    // One more attempt pushes the oldest out; the newest is first.
    const eventId = await emit(env, 'contact.created', contactCreated('Newest'));
    await worker.runOnce();
    const after = await listDeliveryLog(env.database.db, id, { limit: 1_000 });
    expect(after).toHaveLength(100);
    expect(after[0]!.event_id).toBe(eventId);
    expect(after.map((entry) => entry.id)).not.toContain(log[99]!.id);

    // Deliveries whose attempts were pruned are still listed, with no attempts. Attempts run in
    // parallel, so which deliveries those are follows the order attempts were logged in, not the
    // order the deliveries were queued in: tell them apart by the kept log itself.
    const listed = [];
    for (const offset of [0, 100]) {
      const { data } = await env.app.client(env.org.key).GET('/webhooks/{id}/deliveries', {
        params: { path: { id }, query: { limit: 100, offset } },
      });
      expect(data!.pagination.total).toBe(106);
      listed.push(...data!.data);
    }
    expect(new Set(listed.map((delivery) => delivery.id)).size).toBe(106);
    const keptAttemptOf = new Map(after.map((entry) => [entry.delivery_id, entry.id]));
    const pruned = listed.filter((delivery) => !keptAttemptOf.has(delivery.id));
    expect(pruned).toHaveLength(6);
    for (const delivery of pruned)
      expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1, attempts: [] });
    for (const delivery of listed.filter((delivery) => keptAttemptOf.has(delivery.id))) {
      expect(delivery.attempts.map((attempt) => attempt.id)).toEqual([keptAttemptOf.get(delivery.id)]);
    }
  });
});

describe('secret rotation', () => {
  it('signs with both secrets for 24 hours, then with the new one only', async () => {
    const target = await receiver(answer(200));
    const { id, secret: oldSecret } = await register(env, target.url);
    const { data } = await env.app
      .client(env.org.key)
      .POST('/webhooks/{id}/rotate-secret', { params: { path: { id } } });
    const newSecret = data!.secret;
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    const now = clock.now().getTime();
    const during = target.requests[0]!;
    const header = String(during.headers['x-svc-signature']);
    const t = String(during.headers['x-svc-timestamp']);
    const hmac = (secret: string) => createHmac('sha256', secret).update(`${t}.${during.rawBody}`).digest('hex');
    expect(header).toBe(`t=${t},v1=${hmac(newSecret)},v1=${hmac(oldSecret)}`);
    expect(verifySignature(during.rawBody, header, [newSecret], now).ok).toBe(true);
    expect(verifySignature(during.rawBody, header, [oldSecret], now).ok).toBe(true);
    expect(verifySignature(during.rawBody, header, ['0'.repeat(64)], now).ok).toBe(false);

    clock.advance(DAY + 1);
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    const after = target.requests[1]!;
    const afterHeader = String(after.headers['x-svc-signature']);
    expect(afterHeader.match(/v1=/g)).toHaveLength(1);
    expect(verifySignature(after.rawBody, afterHeader, [newSecret], clock.now().getTime()).ok).toBe(true);
    expect(verifySignature(after.rawBody, afterHeader, [oldSecret], clock.now().getTime()).ok).toBe(false);
  });

  it('signs with up to five secrets, refuses a fifth rotation, and ends every grace at once with expire_previous', async () => {
    const target = await receiver(answer(200));
    const { id } = await register(env, target.url);
    const client = env.app.client(env.org.key);
    const rotate = (expirePrevious?: boolean) =>
      client.POST('/webhooks/{id}/rotate-secret', {
        params: { path: { id }, query: expirePrevious === undefined ? {} : { expire_previous: expirePrevious } },
      });
    for (let i = 0; i < 4; i += 1) expect((await rotate()).response.status).toBe(200);
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    expect(String(target.requests[0]!.headers['x-svc-signature']).match(/v1=/g)).toHaveLength(5);
    const refused = await rotate(false);
    expect(refused.response.status).toBe(409);
    expect(refused.error?.error.code).toBe('invalid_state');

    // A leaked secret: one rotation cuts every earlier secret off, whatever their grace.
    const leaked = await rotate(true);
    expect(leaked.response.status).toBe(200);
    const only = leaked.data!.secret;
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    const after = target.requests[1]!;
    const header = String(after.headers['x-svc-signature']);
    const t = String(after.headers['x-svc-timestamp']);
    expect(header).toBe(`t=${t},v1=${createHmac('sha256', only).update(`${t}.${after.rawBody}`).digest('hex')}`);
    const row = await env.database.db
      .selectFrom('webhooks')
      .select('previous_secrets')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.previous_secrets).toEqual([]);

    const bad = await env.app.client(env.org.key).POST('/webhooks/{id}/rotate-secret', {
      params: { path: { id }, query: { expire_previous: 'maybe' as unknown as boolean } },
    });
    expect(bad.response.status).toBe(400);
    expect(bad.error?.error.param).toBe('expire_previous');
  });
});

describe('automatic switch-off', () => {
  it('switches an endpoint off after 5 days of failures and sends it nothing more until re-enabled', async () => {
    const target = await receiver(answer(500));
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    clock.advance(5 * DAY - MINUTE);
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    expect((await endpoint(id)).active).toBe(true);
    clock.advance(MINUTE);
    await worker.runOnce();
    expect((await endpoint(id)).active).toBe(false);
    const sent = target.requests.length;
    expect((await deliveriesOf(id)).filter((delivery) => delivery.status === 'pending')).toEqual([]);

    await emit(env, 'contact.created', contactCreated());
    clock.advance(DAY);
    await worker.runOnce();
    expect(target.requests).toHaveLength(sent);

    target.behaviour = answer(200);
    await env.app.client(env.org.key).PATCH('/webhooks/{id}', { params: { path: { id } }, body: { active: true } });
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    expect(target.requests).toHaveLength(sent + 1);
    expect((await endpoint(id)).active).toBe(true);
  });
});
