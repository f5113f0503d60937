// Shared setup for webhook tests: an app that trusts the test CA and allowlists loopback, delivery
// workers under the test's control, and events emitted the way calls and contacts emit them.
import { randomUUID } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { Clock } from '../../src/clock.js';
import type { Config } from '../../src/config.js';
import type { Db } from '../../src/database/connect.js';
import { emitEvent, emitEvents, type EventDataByKind, type EventKind } from '../../src/webhooks/outbox.js';
import { insertWebhook } from '../../src/webhooks/queries.js';
import { createOrg } from '../../src/orgs/service.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from '../../src/webhooks/delivery/worker.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { createTestOrg, startTestApp, type TestApp, type TestAppOptions, type TestOrg } from './app.js';
import { testTls } from './webhook-receiver.js';

export interface WebhookEnv {
  database: TestDatabase;
  app: TestApp;
  org: TestOrg;
  /** Creates a worker on the app's deps (not started unless `start`); stopped by close(). */
  worker(options?: Partial<DeliveryWorkerOptions> & { start?: boolean }): DeliveryWorker;
  close(): Promise<void>;
}

/** A fresh database, an app (no background workers) that trusts the test CA, and an org. */
export async function webhookEnv(
  options: { clock?: Clock; config?: Partial<Config>; logStream?: TestAppOptions['logStream'] } = {},
): Promise<WebhookEnv> {
  const database = await createTestDatabase();
  const tls = await testTls();
  const app = await startTestApp(database, {
    workers: false,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.logStream ? { logStream: options.logStream } : {}),
    config: {
      webhookPrivateAllowlist: ['127.0.0.0/8'],
      webhookCaCerts: [tls.caCert],
      ...options.config,
    },
  });
  const org = await createTestOrg(database.db, { planId: 'scale' });
  const workers: DeliveryWorker[] = [];
  return {
    database,
    app,
    org,
    worker: ({ start = false, ...workerOptions } = {}) => {
      const worker = new DeliveryWorker(app.deps, { listenUrl: database.url, ...workerOptions });
      workers.push(worker);
      if (start) worker.start();
      return worker;
    },
    close: async () => {
      await Promise.all(workers.map((worker) => worker.stop(0)));
      await app.close();
      await database.drop();
    },
  };
}

/** A contact.created payload that satisfies the spec. */
export function contactCreated(name = 'Asha Verma'): EventDataByKind['contact.created'] {
  return { contact_id: randomUUID(), phone_e164: '+919812345678', name, consent_capture: 'manual' };
}

/** Emits an event in its own transaction, as a state change would; returns the event id. */
export async function emit<K extends EventKind>(
  env: WebhookEnv,
  kind: K,
  data: EventDataByKind[K],
  orgId: string = env.org.orgId,
): Promise<string> {
  return env.database.db.transaction().execute((trx) => emitEvent(trx, orgId, kind, data, null));
}

/** Registers an endpoint through the API; returns its id and secret. */
export async function register(
  env: WebhookEnv,
  url: string,
  events: Array<components['schemas']['SubscribableEventKind']> = ['contact.created'],
  key: string = env.org.key,
): Promise<{ id: string; secret: string }> {
  const { data, error, response } = await env.app.client(key).POST('/webhooks', { body: { url, events } });
  if (!data) throw new Error(`register failed: ${response.status} ${JSON.stringify(error)}`);
  return { id: data.data.id, secret: data.secret };
}

/**
 * A new org with one endpoint for contact.created, written straight to the database (no URL checks),
 * and `count` such events emitted in one transaction, so `count` deliveries wait for it.
 */
export async function endpointWithEvents(db: Db, count: number): Promise<{ orgId: string; webhookId: string }> {
  // An org alone (no agent or key), so a test may run this on a schema older than the agents' latest.
  const org = await createOrg(db, { name: `Endpoint org ${randomUUID().slice(0, 8)}` });
  const webhook = await insertWebhook(db, {
    orgId: org.id,
    url: 'https://receiver.test/hooks',
    events: ['contact.created'],
    secret: `whsec_${randomUUID()}`,
    now: new Date(),
  });
  await db.transaction().execute((trx) =>
    emitEvents(
      trx,
      org.id,
      'contact.created',
      Array.from({ length: count }, () => contactCreated()),
      null,
    ),
  );
  return { orgId: org.id, webhookId: webhook.id };
}
