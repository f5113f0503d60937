// The event registry generated from the spec: every kind the spec's `webhooks` declares has a payload
// type, an envelope and header validator, and a callback in the published document; the one delivery
// path builds, checks and signs every kind, refuses a payload that breaks its kind's schema, and
// delivers every kind an endpoint can subscribe to.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_KINDS, EVENT_VALIDATORS, type EventKind } from '../generated/events.js';
import type { components } from '../generated/openapi.js';
import { validators } from '../src/contract/validators.js';
import { buildDelivery } from '../src/webhooks/delivery/envelope.js';
import { verifySignature } from '../src/webhooks/delivery/verify.js';
import { emitEvent } from '../src/webhooks/outbox.js';
import { sampleEventData } from './support/event-samples.js';
import { answer, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { parseJson } from './support/json.js';

/** An event's delivery as the spec describes it: its request body and parameters. */
interface DeliveryOperation {
  requestBody: unknown;
  parameters: unknown;
}

/** The parts of the published spec these tests compare with the registry. */
interface PublishedSpec {
  webhooks: Record<string, { post: DeliveryOperation }>;
  components: { schemas: Record<'EventKind' | 'SubscribableEventKind', { enum: string[] }> };
  paths: {
    '/webhooks': { post: { callbacks: Record<string, { '{$request.body#/url}': { post: DeliveryOperation } }> } };
  };
}

const published = parseJson<PublishedSpec>(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8'));
const secret = 'a'.repeat(64);

describe('the generated registry', () => {
  it('has every kind of the spec, with validators and a callback copied from its webhooks entry', () => {
    expect([...EVENT_KINDS]).toEqual(Object.keys(published.webhooks));
    expect([...EVENT_KINDS]).toEqual(published.components.schemas.EventKind.enum);
    const createWebhook = published.paths['/webhooks'].post;
    expect(Object.keys(createWebhook.callbacks)).toEqual([...EVENT_KINDS]);
    for (const kind of EVENT_KINDS) {
      const names = EVENT_VALIDATORS[kind];
      expect(typeof validators[names.envelope], kind).toBe('function');
      expect(typeof validators[names.headers], kind).toBe('function');
      const callback = createWebhook.callbacks[kind]!['{$request.body#/url}'].post;
      expect(callback.requestBody).toEqual(published.webhooks[kind]!.post.requestBody);
      expect(callback.parameters).toEqual(published.webhooks[kind]!.post.parameters);
    }
  });

  it.each(EVENT_KINDS)('builds, checks and signs a %s delivery, and refuses one that breaks its schema', (kind) => {
    const data = sampleEventData()[kind];
    const event = { id: `evt_${'a'.repeat(24)}`, kind, data, createdAt: new Date(), traceparent: null, livemode: true };
    const timestampMs = Date.now();
    const built = buildDelivery(event, { id: randomUUID(), timestampMs, secrets: [secret] });
    expect(built.ok).toBe(true);
    if (!built.ok) return;
    expect(built.request.headers['x-svc-event']).toBe(kind);
    expect(validators[EVENT_VALIDATORS[kind].envelope](JSON.parse(built.request.body))).toBe(true);
    expect(verifySignature(built.request.body, built.request.headers['x-svc-signature'], [secret]).ok).toBe(true);

    const { [Object.keys(data)[0]!]: _dropped, ...broken } = data as Record<string, unknown>;
    const refused = buildDelivery({ ...event, data: broken }, { id: randomUUID(), timestampMs, secrets: [secret] });
    expect(refused).toMatchObject({ ok: false, problem: expect.stringContaining(kind) as unknown });
  });
});

describe('delivery of every subscribable kind', () => {
  let env: WebhookEnv;
  let receiver: Receiver;

  beforeAll(async () => {
    env = await webhookEnv();
    env.worker({ start: true });
    receiver = await startReceiver(answer(200));
  });

  afterAll(async () => {
    await receiver?.close();
    await env?.close();
  });

  it('sends each kind with its own x-svc-event and a body valid for it', async () => {
    const subscribable = published.components.schemas.SubscribableEventKind.enum as EventKind[];
    await register(env, receiver.url, subscribable as components['schemas']['SubscribableEventKind'][]);
    const samples = sampleEventData();
    for (const kind of subscribable) {
      await env.database.db
        .transaction()
        .execute((trx) => emitEvent(trx, env.org.orgId, kind, samples[kind] as never, null));
    }
    const requests = await receiver.waitFor(subscribable.length, 10_000);
    expect(requests.map((request) => request.headers['x-svc-event']).sort()).toEqual([...subscribable].sort());
    for (const request of requests) {
      const kind = request.headers['x-svc-event'] as EventKind;
      expect(validators[EVENT_VALIDATORS[kind].envelope](JSON.parse(request.rawBody)), kind).toBe(true);
    }
  });
});
