// Webhook delivery under load: 50 endpoints registered through the API (spread over three orgs, at
// most 20 each), one of which never answers. Events are emitted in bulk with emitEvents, as contacts
// and calls emit them; the receivers time each event's first arrival against its created_at.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../src/database/connect.js';
import { DELIVERY_TIMEOUT_MS } from '../../src/webhooks/policy.js';
import { emitEvents } from '../../src/webhooks/outbox.js';
import { percentile } from './load.js';
import { medianOf, repeat } from './repeat.js';
import type { ReceiverFarm } from './receivers.js';
import type { BenchOrg } from './seed.js';

// Endpoints per org (the API allows 20 per org).
const ENDPOINTS_PER_ORG = [20, 20, 10];
/** Receivers (and endpoints) in all. */
export const RECEIVER_COUNT = ENDPOINTS_PER_ORG.reduce((a, b) => a + b, 0);
/** The receiver that never answers: the last endpoint of the last org. */
export const HANGING_RECEIVER = RECEIVER_COUNT - 1;

/** First-attempt latencies (event created_at to arrival) at the healthy receivers during a steady load. */
export interface LatencyPhase {
  /** Deliveries per second emitted to all active endpoints (the hanging one included when active). */
  offeredPerSecond: number;
  seconds: number;
  deliveries: number;
  missing: number;
  p50: number;
  p99: number;
  max: number;
}

/** How fast a backlog reached the healthy receivers. */
export interface ThroughputPhase {
  events: number;
  deliveries: number;
  missing: number;
  seconds: number;
  perSecond: number;
}

/** One repetition of the three measurements. */
export interface WebhookRun {
  withoutHanging: LatencyPhase;
  withHanging: LatencyPhase;
  backlog: ThroughputPhase;
}

/** The delivery measurements: the median of each figure over the runs, and the runs themselves. */
export interface WebhookReport extends WebhookRun {
  endpoints: number;
  hangingEndpoints: number;
  runs: WebhookRun[];
  /** Requests the hanging receiver got (each held until the 10 s delivery timeout). */
  hangingRequests: number;
}

interface HookOrg extends BenchOrg {
  /** Indexes of this org's receivers. */
  receivers: number[];
}

async function api(
  origin: string,
  key: string,
  method: string,
  path: string,
  body: unknown,
): Promise<{ data: { id: string } }> {
  const response = await fetch(`${origin}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { data: { id: string } };
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

/** Emits `count` contact.created events for an org in one transaction; returns their ids. */
function emit(db: Db, orgId: string, count: number): Promise<string[]> {
  const payloads = Array.from({ length: count }, (_, n) => ({
    contact_id: randomUUID(),
    phone_e164: '+919812345678',
    name: `Bench ${n}`,
    consent_capture: 'manual' as const,
  }));
  return db.transaction().execute((trx) => emitEvents(trx, orgId, 'contact.created', payloads, null));
}

/** Healthy first arrivals of the given events. */
function healthyArrivals(farm: ReceiverFarm, events: Set<string>) {
  return farm.arrivals.filter((arrival) => farm.healthy[arrival.receiver] && events.has(arrival.eventId));
}

async function waitForArrivals(farm: ReceiverFarm, events: Set<string>, expected: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (healthyArrivals(farm, events).length < expected && Date.now() < deadline) await sleep(50);
  return healthyArrivals(farm, events);
}

function healthyCount(farm: ReceiverFarm, org: HookOrg): number {
  return org.receivers.filter((index) => farm.healthy[index]).length;
}

/**
 * Every 500 ms one event per org (50 deliveries, one per endpoint: 100/s, well below the throughput
 * target, so latency is measured without a queue) for `seconds`.
 */
async function steadyLoad(
  db: Db,
  farm: ReceiverFarm,
  orgs: HookOrg[],
  seconds: number,
  hangingActive: boolean,
): Promise<LatencyPhase> {
  const tickMs = 500;
  const events = new Set<string>();
  let expected = 0;
  const started = performance.now();
  for (let tick = 0; tick < (seconds * 1000) / tickMs; tick += 1) {
    const wait = started + tick * tickMs - performance.now();
    if (wait > 0) await sleep(wait);
    const ids = await Promise.all(orgs.map((org) => emit(db, org.orgId, 1)));
    for (const id of ids.flat()) events.add(id);
    expected += orgs.reduce((sum, org) => sum + healthyCount(farm, org), 0);
  }
  const arrived = await waitForArrivals(farm, events, expected, 30_000);
  const latencies = Float64Array.from(arrived.map((arrival) => arrival.latencyMs)).sort();
  const endpoints = RECEIVER_COUNT - (hangingActive ? 0 : 1);
  return {
    offeredPerSecond: (endpoints * 1000) / tickMs,
    seconds,
    deliveries: arrived.length,
    missing: expected - arrived.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? NaN,
  };
}

/** `perOrg` events per org emitted at once; the rate at which their deliveries reach the healthy receivers. */
async function backlog(db: Db, farm: ReceiverFarm, orgs: HookOrg[], perOrg: number): Promise<ThroughputPhase> {
  const started = Date.now();
  const ids = await Promise.all(orgs.map((org) => emit(db, org.orgId, perOrg)));
  const events = new Set(ids.flat());
  const expected = orgs.reduce((sum, org) => sum + perOrg * healthyCount(farm, org), 0);
  const arrived = await waitForArrivals(farm, events, expected, 120_000);
  const last = arrived.reduce((max, arrival) => Math.max(max, arrival.at), started);
  const seconds = (last - started) / 1000;
  return {
    events: events.size,
    deliveries: arrived.length,
    missing: expected - arrived.length,
    seconds,
    perSecond: arrived.length / seconds,
  };
}

/**
 * Registers the endpoints (the seed removed those of earlier runs) and warms up; then, `repetitions`
 * times, measures steady-load latency without and with the hanging endpoint and the drain rate of a
 * backlog. Throws when the API refuses a call.
 */
export async function benchWebhooks(options: {
  db: Db;
  origin: string;
  orgs: BenchOrg[];
  farm: ReceiverFarm;
  steadySeconds: number;
  backlogPerOrg: number;
  repetitions: number;
}): Promise<WebhookReport> {
  const { db, origin, farm } = options;
  let next = 0;
  const orgs: HookOrg[] = options.orgs.map((org, n) => {
    const receivers = Array.from({ length: ENDPOINTS_PER_ORG[n]! }, () => next++);
    return { ...org, receivers };
  });
  let hangingEndpoint: { key: string; id: string } | null = null;
  for (const org of orgs) {
    for (const index of org.receivers) {
      const created = await api(origin, org.key, 'POST', '/webhooks', {
        url: farm.urls[index],
        events: ['contact.created'],
      });
      if (index === HANGING_RECEIVER) hangingEndpoint = { key: org.key, id: created.data.id };
    }
  }
  const hanging = hangingEndpoint!;
  const setHanging = (active: boolean) => api(origin, hanging.key, 'PATCH', `/webhooks/${hanging.id}`, { active });
  await setHanging(false);
  // Untimed: opens the keep-alive connections (TLS handshakes) and warms the worker, as the HTTP
  // scenarios get a warm-up round.
  await steadyLoad(db, farm, orgs, 2, false);
  const runs = await repeat(options.repetitions, async (run) => {
    await setHanging(false);
    // Sends to the hanging receiver still open from the previous run's backlog end at their timeout;
    // until then they would weigh on the run without it.
    if (run > 0) await sleep(DELIVERY_TIMEOUT_MS);
    const withoutHanging = await steadyLoad(db, farm, orgs, options.steadySeconds, false);
    await setHanging(true);
    const withHanging = await steadyLoad(db, farm, orgs, options.steadySeconds, true);
    return { withoutHanging, withHanging, backlog: await backlog(db, farm, orgs, options.backlogPerOrg) };
  });
  return {
    endpoints: RECEIVER_COUNT,
    hangingEndpoints: 1,
    withoutHanging: medianOf(
      runs.map((run) => run.withoutHanging),
      ['missing'],
    ),
    withHanging: medianOf(
      runs.map((run) => run.withHanging),
      ['missing'],
    ),
    backlog: medianOf(
      runs.map((run) => run.backlog),
      ['missing'],
    ),
    runs,
    hangingRequests: farm.requestCounts[HANGING_RECEIVER]!,
  };
}
