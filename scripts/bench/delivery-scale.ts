// The delivery scale phase: how fast a backlog of webhook deliveries drains with 1, 2 and 4 worker
// processes (`serve --role worker`, the production command) spread over 1, 100 and 1,000 endpoints.
// Endpoints belong to bench orgs of 20 each (the API's cap per org) and point at a few loopback HTTPS
// receivers that answer 200 at once; signing and payload validation stay on as in production.
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../src/database/connect.js';
import { createOrg } from '../../src/orgs/service.js';
import type { ServerCertificate } from '../../src/tools/local-ca.js';
import { startHttpsReceiver, type HttpsReceiver } from '../../src/tools/https-receiver.js';
import { emitEvents } from '../../src/webhooks/outbox.js';
import { insertWebhook } from '../../src/webhooks/queries.js';
import type { Child } from './processes.js';
import { medianOf, repeat } from './repeat.js';

/** Worker process counts measured. */
export const DELIVERY_WORKERS = [1, 2, 4] as const;
/** Endpoint counts measured. */
export const DELIVERY_ENDPOINTS = [1, 100, 1_000] as const;
/** Endpoints per bench org (the API's limit). */
const ENDPOINTS_PER_ORG = 20;
/** Receiver servers the endpoints are spread over. */
const RECEIVERS = 8;
const ORG_NAME = (n: number) => `Bench delivery scale ${n}`;

/** One drain: a backlog of `deliveries` to `endpoints` endpoints with `workers` worker processes. */
export interface DeliveryDrain {
  deliveries: number;
  missing: number;
  seconds: number;
  perSecond: number;
}

/** One row: the median of its drains (missing deliveries summed), and each drain's rate. */
export interface DeliveryScaleRow extends DeliveryDrain {
  workers: number;
  endpoints: number;
  runsPerSecond: number[];
}

/** What the phase needs from the benchmark session. */
export interface DeliveryScaleOptions {
  db: Db;
  tls: ServerCertificate;
  /** Deliveries in each backlog. */
  deliveries: number;
  /** Drains measured per row. */
  repetitions: number;
  /** Starts one worker process. */
  startWorker: () => Promise<Child>;
  log: (message: string) => void;
}

/** Receivers that count the first arrival of each (endpoint, event) pair. */
interface Counter {
  urls: string[];
  arrived: number;
  lastAt: number;
  reset(): void;
  close(): Promise<void>;
}

async function startCounter(tls: ServerCertificate): Promise<Counter> {
  const seen = new Set<string>();
  const receivers: HttpsReceiver[] = [];
  const counter: Counter = {
    urls: [],
    arrived: 0,
    lastAt: 0,
    reset: () => {
      seen.clear();
      counter.arrived = 0;
      counter.lastAt = 0;
    },
    close: async () => {
      await Promise.all(receivers.map((receiver) => receiver.close()));
    },
  };
  for (let n = 0; n < RECEIVERS; n += 1) {
    const receiver = await startHttpsReceiver({
      tls,
      keepAliveTimeout: 65_000,
      answer: (received, _request, response) => {
        const key = `${received.path} ${(JSON.parse(received.rawBody) as { id: string }).id}`;
        if (!seen.has(key)) {
          seen.add(key);
          counter.arrived += 1;
          counter.lastAt = received.receivedAt;
        }
        response.end('ok');
      },
    });
    receivers.push(receiver);
    counter.urls.push(receiver.origin);
  }
  return counter;
}

/** The bench orgs of this phase (made on first use), with their earlier endpoints removed. */
async function prepareOrgs(db: Db, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 1; n <= count; n += 1) {
    const found = await db.selectFrom('orgs').select('id').where('name', '=', ORG_NAME(n)).executeTakeFirst();
    ids.push(found?.id ?? (await createOrg(db, { name: ORG_NAME(n) })).id);
  }
  await db.deleteFrom('webhooks').where('org_id', 'in', ids).execute();
  return ids;
}

/** Registers `endpoints` endpoints over the orgs, 20 each; returns the orgs used with their endpoint counts. */
async function registerEndpoints(
  db: Db,
  orgIds: string[],
  counter: Counter,
  endpoints: number,
): Promise<Array<{ orgId: string; endpoints: number }>> {
  await db.deleteFrom('webhooks').where('org_id', 'in', orgIds).execute();
  const used: Array<{ orgId: string; endpoints: number }> = [];
  for (let made = 0; made < endpoints;) {
    const orgId = orgIds[used.length]!;
    const here = Math.min(ENDPOINTS_PER_ORG, endpoints - made);
    for (let n = 0; n < here; n += 1) {
      const index = made + n;
      await insertWebhook(db, {
        orgId,
        url: `${counter.urls[index % RECEIVERS]}/hooks/${index}`,
        events: ['contact.created'],
        secret: `whsec_${randomBytes(24).toString('base64url')}`,
        now: new Date(),
      });
    }
    used.push({ orgId, endpoints: here });
    made += here;
  }
  return used;
}

/** Emits events so that about `deliveries` deliveries are queued over the orgs' endpoints; returns how many. */
async function emitBacklog(db: Db, orgs: Array<{ orgId: string; endpoints: number }>, deliveries: number) {
  const total = orgs.reduce((sum, org) => sum + org.endpoints, 0);
  const perOrg = Math.max(1, Math.round(deliveries / total));
  // One org after another: 50 transactions at once could wait past the pool's connection timeout
  // while 4 worker processes keep PostgreSQL busy.
  for (const org of orgs) {
    await db.transaction().execute((trx) =>
      emitEvents(
        trx,
        org.orgId,
        'contact.created',
        Array.from({ length: perOrg }, (_, n) => ({
          contact_id: randomUUID(),
          phone_e164: '+919812345678',
          name: `Scale ${n}`,
          consent_capture: 'manual' as const,
        })),
        null,
      ),
    );
  }
  return perOrg * total;
}

async function waitForArrivals(counter: Counter, expected: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (counter.arrived < expected && Date.now() < deadline) await sleep(20);
}

/** Drains one backlog per (endpoints, workers) pair; throws when a worker cannot start. */
export async function benchDeliveryScale(options: DeliveryScaleOptions): Promise<DeliveryScaleRow[]> {
  const { db, log } = options;
  const counter = await startCounter(options.tls);
  const orgIds = await prepareOrgs(db, Math.max(...DELIVERY_ENDPOINTS) / ENDPOINTS_PER_ORG);
  const rows: DeliveryScaleRow[] = [];
  try {
    for (const endpoints of DELIVERY_ENDPOINTS) {
      const orgs = await registerEndpoints(db, orgIds, counter, endpoints);
      for (const workers of DELIVERY_WORKERS) {
        const children = await Promise.all(Array.from({ length: workers }, () => options.startWorker()));
        try {
          // Untimed: one event per endpoint opens the connections (TLS handshakes) of every worker.
          counter.reset();
          await waitForArrivals(counter, await emitBacklog(db, orgs, endpoints), 60_000);
          const drains = await repeat(options.repetitions, async () => {
            counter.reset();
            const started = Date.now();
            const expected = await emitBacklog(db, orgs, options.deliveries);
            await waitForArrivals(counter, expected, 120_000);
            const seconds = (Math.max(counter.lastAt, started + 1) - started) / 1000;
            const arrived = counter.arrived;
            return { deliveries: arrived, missing: expected - arrived, seconds, perSecond: arrived / seconds };
          });
          const row: DeliveryScaleRow = {
            workers,
            endpoints,
            ...medianOf(drains, ['missing']),
            runsPerSecond: drains.map((drain) => drain.perSecond),
          };
          rows.push(row);
          log(
            `delivery scale ${workers} worker(s), ${endpoints} endpoint(s): ${row.perSecond.toFixed(0)} deliveries/s ` +
              `(runs ${row.runsPerSecond.map((v) => v.toFixed(0)).join(', ')}; ${row.missing} missing)`,
          );
        } finally {
          await Promise.all(children.map((child) => child.stop()));
        }
      }
    }
  } finally {
    await db.deleteFrom('webhooks').where('org_id', 'in', orgIds).execute();
    await counter.close();
  }
  return rows;
}
