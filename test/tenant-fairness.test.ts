// A noisy neighbour: one org floods test sends and thousands of deliveries at endpoints that never
// answer, while another org goes about its business on the same process and pool. The other org is
// never held behind the flood and sees no error, its own event's first attempt is not held back,
// /readyz stays 200, and the flooding org's test sends beyond its cap get 429 with Retry-After.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlan } from '../src/orgs/service.js';
import { emitEvents } from '../src/webhooks/outbox.js';
import { createTestOrg, rawRequest, type TestOrg } from './support/app.js';
import { parseJson, type ErrorResponse } from './support/json.js';
import { testNumber, waitFor } from './support/calls.js';
import { answer, hang, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { contactCreated, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';

const FLOOD_MS = 8_000;
const TEST_SENDS = 40;

let env: WebhookEnv;
let quiet: TestOrg;
const receivers: Receiver[] = [];

beforeAll(async () => {
  env = await webhookEnv();
  env.worker({ start: true });
  // The quiet org's traffic is measured, not limited: its plan allows far more than the test sends.
  await createPlan(env.database.db, { id: 'unmetered', name: 'Unmetered', rateLimitPerMinute: 1_000_000 });
  quiet = await createTestOrg(env.database.db, { planId: 'unmetered' });
});

afterAll(async () => {
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await env?.close();
});

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('one org flooding endpoints that never answer', () => {
  it(
    'leaves another org its normal latency, no error, its first attempt on time and /readyz 200',
    { timeout: 60_000 },
    async () => {
      // The noisy org: every endpoint it may have (20) hangs, with 200 events each queued for all of them.
      const hanging: string[] = [];
      for (let i = 0; i < 20; i += 1) {
        const receiver = await startReceiver(hang);
        receivers.push(receiver);
        hanging.push((await register(env, receiver.url)).id);
      }
      await env.database.db.transaction().execute((trx) =>
        emitEvents(
          trx,
          env.org.orgId,
          'contact.created',
          Array.from({ length: 200 }, () => contactCreated()),
          null,
        ),
      );

      // The quiet org has one healthy endpoint.
      const healthy = await startReceiver(answer(200));
      receivers.push(healthy);
      await register(env, healthy.url, ['contact.created'], quiet.key);

      const headers = { Authorization: `Bearer ${quiet.key}`, 'Content-Type': 'application/json' };
      const latencies: number[] = [];
      const failures: string[] = [];
      const timed = async (method: string, path: string, body?: unknown) => {
        const started = performance.now();
        const response = await rawRequest<ErrorResponse>(env.app, method, path, {
          headers,
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        latencies.push(performance.now() - started);
        if (response.status >= 300) failures.push(`${method} ${path}: ${response.status}`);
      };
      const business = async (until: number) => {
        while (Date.now() < until) {
          await timed('GET', '/webhooks');
          await timed('POST', '/contacts', { phone_e164: testNumber('7777'), consent_capture: 'manual' });
          await timed('GET', '/calls?limit=10');
        }
      };
      // The quiet org's normal latency, before the flood.
      const quietUntil = Date.now() + 2_000;
      await Promise.all([business(quietUntil), business(quietUntil)]);
      const normalP99 = percentile(latencies, 99);
      latencies.length = 0;

      const noisy = { Authorization: `Bearer ${env.org.key}` };
      const tests = Promise.all(
        Array.from({ length: TEST_SENDS }, (_, i) =>
          rawRequest<ErrorResponse>(env.app, 'POST', `/webhooks/${hanging[i % hanging.length]}/test`, {
            headers: noisy,
          }),
        ),
      );

      const ready: number[] = [];
      const until = Date.now() + FLOOD_MS;
      const probe = async () => {
        while (Date.now() < until) {
          ready.push((await fetch(`${env.app.baseUrl}/readyz`)).status);
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      };
      const firstAttempt = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        const sent = Date.now();
        const [eventId] = await env.database.db
          .transaction()
          .execute((trx) => emitEvents(trx, quiet.orgId, 'contact.created', [contactCreated('Quiet')], null));
        const arrival = await waitFor(
          'the quiet org event',
          () => healthy.requests.find((request) => parseJson<{ id: string }>(request.rawBody).id === eventId),
          5_000,
        );
        return arrival.receivedAt - sent;
      })();
      await Promise.all([business(until), business(until), probe()]);
      const firstAttemptMs = await firstAttempt;

      const p50 = percentile(latencies, 50);
      const p99 = percentile(latencies, 99);
      console.log(
        `noisy neighbour: other org p99 ${normalP99.toFixed(1)} ms before the flood; during it ` +
          `${latencies.length} requests, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms, ` +
          `${failures.length} errors; its first attempt after ${firstAttemptMs} ms; /readyz ${ready.length} probes`,
      );
      expect(failures).toEqual([]);
      // Bounds that hold on a busy machine too (CI runs three files at once): most requests stay quick,
      // and none waits as long as one queued behind the flood for a pool connection would before
      // failing (the pool's connect timeout); an attempt at a hanging endpoint holds on far longer.
      expect(p50).toBeLessThan(500);
      expect(p99).toBeLessThan(env.app.deps.config.dbConnectTimeoutMs);
      expect(firstAttemptMs).toBeLessThan(2_000);
      expect(ready.every((status) => status === 200)).toBe(true);

      // The noisy org's test sends: at most its cap in flight, the rest refused with Retry-After.
      const answers = await tests;
      const refused = answers.filter((response) => response.status === 429);
      expect(refused.length).toBeGreaterThanOrEqual(TEST_SENDS - env.app.deps.config.testSendsPerOrg);
      for (const response of refused) {
        expect(response.body.error.code).toBe('too_many_requests');
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      expect(answers.every((response) => response.status === 200 || response.status === 429)).toBe(true);
    },
  );
});
