// Delivery under trouble: misbehaving receivers never delay a healthy one, DELETE is final even for
// attempts in flight, and a worker killed mid-delivery loses nothing.
import { spawn } from 'node:child_process';
import type { ServerResponse } from 'node:http';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { emitEvents } from '../src/webhooks/outbox.js';
import { DeliveryWorker } from '../src/webhooks/delivery/worker.js';
import { listDeliveryLog } from '../src/webhooks/service.js';
import { connectDatabase } from '../src/database/connect.js';
import { ManualClock, startTestApp, type TestApp } from './support/app.js';
import { waitFor } from './support/calls.js';
import { blocksAnother } from './support/database.js';
import {
  answer,
  hang,
  hugeBody,
  reset,
  startReceiver,
  testTls,
  type Behaviour,
  type Receiver,
} from './support/webhook-receiver.js';
import { contactCreated, emit, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { parseJson } from './support/json.js';

const receivers: Receiver[] = [];
const envs: WebhookEnv[] = [];
const apps: TestApp[] = [];

afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  await Promise.all(envs.splice(0).map((env) => env.close()));
});

async function receiver(behaviour: Behaviour): Promise<Receiver> {
  const started = await startReceiver(behaviour);
  receivers.push(started);
  return started;
}

async function environment(...args: Parameters<typeof webhookEnv>): Promise<WebhookEnv> {
  const env = await webhookEnv(...args);
  envs.push(env);
  return env;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A behaviour that holds every answer until release() is called. */
function holding() {
  const held: ServerResponse[] = [];
  const behaviour: Behaviour = (_request, response) => void held.push(response);
  return {
    behaviour,
    held,
    release: (status: number) => {
      for (const response of held.splice(0)) response.writeHead(status).end('released');
    },
  };
}

/**
 * With 6 events queued for an endpoint that never answers, waits until 4 attempts hang on it (the
 * per-endpoint cap), then deletes it: the 204 comes well before the 10-second send timeout would end
 * those attempts, no request to the endpoint starts afterwards (not the 2 queued deliveries, not a new
 * event's), the hanging attempts' connections are closed, and the endpoint's rows are gone.
 */
async function deleteWhileHanging(env: WebhookEnv, target: Receiver, id: string): Promise<void> {
  await env.database.db.transaction().execute((trx) =>
    emitEvents(
      trx,
      env.org.orgId,
      'contact.created',
      Array.from({ length: 6 }, (_, i) => contactCreated(`N${i}`)),
      null,
    ),
  );
  await target.waitFor(4, 9_000);
  await sleep(300);
  expect(target.started).toHaveLength(4);

  const sentAt = Date.now();
  const { response } = await env.app.client(env.org.key).DELETE('/webhooks/{id}', { params: { path: { id } } });
  const answeredAt = Date.now();
  expect(response.status).toBe(204);
  // Aborted, not waited for: far from the 10 s the hanging attempts would otherwise last.
  expect(answeredAt - sentAt).toBeLessThan(5_000);
  // Every request that ever reached the receiver had started before the DELETE was even sent...
  expect(Math.max(...target.started)).toBeLessThan(sentAt);
  // ...and the aborted attempts closed their connections.
  await expect.poll(() => target.pending, { timeout: 3_000, interval: 50 }).toBe(0);

  // Nothing more: not the queued deliveries, not retries, not new events.
  await emit(env, 'contact.created', contactCreated());
  await sleep(2_500);
  expect(target.started).toHaveLength(4);
  expect(
    await env.database.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', id).execute(),
  ).toEqual([]);
  expect(await env.database.db.selectFrom('webhooks').select('id').where('id', '=', id).execute()).toEqual([]);
}

/** Runs `work` while a delivery worker runs in another process (test/support/delivery-worker-process.ts). */
async function withWorkerProcess(
  env: WebhookEnv,
  extraEnv: Record<string, string>,
  work: () => Promise<void>,
): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/delivery-worker-process.ts'], {
    env: {
      ...process.env,
      WORKER_DATABASE_URL: env.database.url,
      WORKER_CA_PEM: (await testTls()).caCert,
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      child.once('exit', () => reject(new Error('worker process exited early')));
    });
    await work();
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  }
}

describe('isolation', () => {
  it(
    'a hanging, resetting, redirecting, failing or flooding endpoint never delays a healthy one',
    { timeout: 40_000 },
    async () => {
      const env = await environment();
      env.worker({ start: true });
      const hanging = await receiver(hang);
      const bad = [
        await receiver(reset),
        await receiver(answer(302, '', { location: 'https://127.0.0.1:9/' })),
        await receiver(answer(404)),
        await receiver(answer(503)),
        await receiver(hugeBody(50)),
      ];
      const healthy = await receiver(answer(200));
      const { id: hangingId } = await register(env, hanging.url);
      for (const target of bad) await register(env, target.url);
      await register(env, healthy.url);

      await env.database.db.transaction().execute((trx) =>
        emitEvents(
          trx,
          env.org.orgId,
          'contact.created',
          Array.from({ length: 6 }, (_, i) => contactCreated(`N${i}`)),
          null,
        ),
      );
      // The hanging endpoint's first 4 attempts are open: they end only at their 10-second timeout.
      await hanging.waitFor(4, 9_000);
      await healthy.waitFor(6, 9_000);
      for (const target of bad) await target.waitFor(4, 9_000);
      // All 4 hanging requests are still open (unanswered, connections up) and none is logged: every
      // delivery above arrived while they were open, so nothing waited for the hanging endpoint's
      // 10-second timeout (this needs no wall-clock bound, however slow the machine).
      expect(hanging.pending).toBe(4);
      expect(await listDeliveryLog(env.database.db, hangingId, { limit: 10 })).toEqual([]);
      // The hanging endpoint holds at most 4 attempts at a time (the per-endpoint cap).
      await sleep(500);
      expect(hanging.started).toHaveLength(4);
      expect(hanging.pending).toBe(4);

      // The 10-second timeout ends its attempts; they are logged as timeouts and the rest are sent.
      await expect
        .poll(
          async () =>
            (await listDeliveryLog(env.database.db, hangingId, { limit: 10 })).map((entry) => entry.failure_kind),
          {
            timeout: 15_000,
            interval: 250,
          },
        )
        .toEqual(['timeout', 'timeout', 'timeout', 'timeout']);
      const [entry] = await listDeliveryLog(env.database.db, hangingId, { limit: 1 });
      expect(entry!.duration_ms).toBeGreaterThanOrEqual(9_900);
      expect(entry!.duration_ms).toBeLessThan(11_000);
      await hanging.waitFor(6, 3_000);
    },
  );
});

describe('DELETE /webhooks/{id}', () => {
  // "Not one more request" means: no request to the endpoint *starts* after the 204. A request starts
  // when the sender writes its first byte; every attempt holds the endpoint's send lock from its last
  // check of the endpoint until it has ended, and DELETE aborts the attempts in flight and answers only
  // once it holds that lock. So at the 204 every earlier attempt has ended (its connection closed) and
  // none can begin. A request whose bytes were already written can still be read by the receiver after
  // the 204 (they were on the wire), but it began before the DELETE was answered.
  it(
    'aborts attempts in flight instead of waiting for them: 204 at once, and no request starts after it',
    { timeout: 30_000 },
    async () => {
      const env = await environment();
      env.worker({ start: true });
      const target = await receiver(hang);
      const { id } = await register(env, target.url);
      await deleteWhileHanging(env, target, id);
    },
  );

  it("does the same when the attempts are another process's (told by notification)", { timeout: 40_000 }, async () => {
    const env = await environment();
    const target = await receiver(hang);
    const { id } = await register(env, target.url);
    await withWorkerProcess(env, {}, () => deleteWhileHanging(env, target, id));
  });

  it(
    'does the same when that process does not listen (its watch finds the deletion within a second)',
    { timeout: 40_000 },
    async () => {
      const env = await environment();
      const target = await receiver(hang);
      const { id } = await register(env, target.url);
      await withWorkerProcess(env, { WORKER_LISTEN: 'off' }, () => deleteWhileHanging(env, target, id));
    },
  );

  it(
    'ends a test delivery in flight with not_found, and nothing is sent after the 204',
    { timeout: 30_000 },
    async () => {
      const env = await environment();
      const target = await receiver(hang);
      const { id } = await register(env, target.url);
      const client = env.app.client(env.org.key);
      const testing = client.POST('/webhooks/{id}/test', { params: { path: { id } } });
      await target.waitFor(1, 9_000);
      const sentAt = Date.now();
      const { response } = await client.DELETE('/webhooks/{id}', { params: { path: { id } } });
      expect(response.status).toBe(204);
      expect(Date.now() - sentAt).toBeLessThan(5_000);
      const tested = await testing;
      expect(tested.response.status).toBe(404);
      expect(tested.error).toMatchObject({ error: { code: 'not_found' } });
      await sleep(1_000);
      expect(target.started).toHaveLength(1);
      expect(target.pending).toBe(0);
    },
  );

  it('never deadlocks with a claim in progress on one of its pending deliveries', async () => {
    // A claim locks the delivery rows it takes, then share-locks their endpoint rows. This transaction
    // does the same in two steps: it holds a pending delivery, the DELETE comes and waits for it, and
    // only then the transaction asks for the endpoint row.
    const env = await environment();
    const target = await receiver(answer(200));
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    const { db } = env.database;
    const pending = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', id)
      .executeTakeFirstOrThrow();
    let deleting: ReturnType<ReturnType<TestApp['client']>['DELETE']> | undefined;
    await db.transaction().execute(async (trx) => {
      await trx.selectFrom('webhook_deliveries').select('id').where('id', '=', pending.id).forUpdate().execute();
      deleting = env.app.client(env.org.key).DELETE('/webhooks/{id}', { params: { path: { id } } });
      await waitFor('the DELETE to wait for the delivery row', () => blocksAnother(trx), 5_000);
      await trx.selectFrom('webhooks').select('id').where('id', '=', id).forKeyShare().execute();
    });
    const { response } = await deleting!;
    expect(response.status).toBe(204);
    // Gone from the API at the answer; the row itself goes with the clean-up that follows it.
    const read = await env.app.client(env.org.key).GET('/webhooks/{id}', { params: { path: { id } } });
    expect(read.response.status).toBe(404);
    await waitFor(
      'the clean-up to remove the endpoint row',
      async () => (await db.selectFrom('webhooks').select('id').where('id', '=', id).executeTakeFirst()) === undefined,
      15_000,
    );
    expect(target.requests).toHaveLength(0);
  });

  it('drops scheduled retries at once', async () => {
    const clock = new ManualClock(Date.now() + 10 * 60_000);
    const env = await environment({ clock });
    const worker = env.worker();
    const target = await receiver(answer(500));
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    await worker.runOnce();
    expect(target.requests).toHaveLength(1);
    const { response } = await env.app.client(env.org.key).DELETE('/webhooks/{id}', { params: { path: { id } } });
    expect(response.status).toBe(204);
    clock.advance(24 * 3_600_000);
    expect(await worker.runOnce()).toBe(0);
    expect(target.requests).toHaveLength(1);
  });
});

describe('a send waiting on the network', () => {
  it(
    'holds no database connection: with a one-connection pool the API answers while attempts hang',
    { timeout: 30_000 },
    async () => {
      const env = await environment();
      const db = connectDatabase(env.database.url, { poolSize: 1 }).db;
      try {
        const narrow = await startTestApp(
          { db, url: env.database.url },
          {
            workers: false,
            config: { webhookPrivateAllowlist: ['127.0.0.0/8'], webhookCaCerts: [(await testTls()).caCert] },
          },
        );
        apps.push(narrow);
        const worker = new DeliveryWorker(narrow.deps, { listenUrl: env.database.url });
        worker.start();
        try {
          const hanging = await receiver(hang);
          const { id } = await register(env, hanging.url);
          await emit(env, 'contact.created', contactCreated());
          const testing = narrow.client(env.org.key).POST('/webhooks/{id}/test', { params: { path: { id } } });
          await hanging.waitFor(2, 9_000);
          // Two sends hang (a worker's and a test send's) and the pool's one connection is free.
          const started = Date.now();
          const { response } = await narrow.client(env.org.key).GET('/webhooks');
          expect(response.status).toBe(200);
          expect(Date.now() - started).toBeLessThan(1_000);
          await testing;
        } finally {
          await worker.stop(0);
        }
      } finally {
        await db.destroy();
      }
    },
  );

  it(
    'survives its database connections being cut, records the attempt on a new one, and carries on',
    { timeout: 30_000 },
    async () => {
      const env = await environment();
      env.worker({ start: true });
      const hold = holding();
      const target = await receiver(hold.behaviour);
      const { id } = await register(env, target.url);
      await emit(env, 'contact.created', contactCreated());
      await target.waitFor(1, 9_000);

      // Cut every connection of the app's pool, as a database restart or a network failure would.
      await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid()`.execute(env.database.db);
      hold.release(200);
      await expect
        .poll(
          async () => (await listDeliveryLog(env.database.db, id, { limit: 10 })).map((entry) => entry.status_code),
          {
            timeout: 5_000,
            interval: 50,
          },
        )
        .toEqual([200]);

      // The worker goes on.
      await emit(env, 'contact.created', contactCreated());
      await target.waitFor(2, 9_000);
    },
  );
});

describe('a worker killed mid-delivery', () => {
  it(
    'leaves the delivery claimed; after the lease expires another worker sends it again',
    { timeout: 60_000 },
    async () => {
      const env = await environment();
      const hold = holding();
      const target = await receiver(hold.behaviour);
      const { id } = await register(env, target.url);
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/delivery-worker-process.ts'], {
        env: { ...process.env, WORKER_DATABASE_URL: env.database.url, WORKER_CA_PEM: (await testTls()).caCert },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
          child.once('exit', () => reject(new Error('worker process exited early')));
        });
        const eventId = await emit(env, 'contact.created', contactCreated());
        const [first] = await target.waitFor(1, 10_000);
        child.kill('SIGKILL');
        await exited;

        const [claimed] = await env.database.db
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('webhook_id', '=', id)
          .execute();
        expect(claimed).toMatchObject({ status: 'pending', attempt_count: 0 });
        expect(claimed!.lease_expires_at).not.toBeNull();

        // Before the lease expires nobody else takes it.
        expect(await env.worker({ listenUrl: null }).runOnce()).toBe(0);

        // After it expires (60 s), a restarted worker sends the event again.
        target.behaviour = answer(200);
        const afterRestart = new DeliveryWorker(
          { ...env.app.deps, clock: new ManualClock(Date.now() + 61_000) },
          { listenUrl: null },
        );
        try {
          expect(await afterRestart.runOnce()).toBe(1);
        } finally {
          await afterRestart.stop(0);
        }
        expect(target.requests).toHaveLength(2);
        const second = target.requests[1]!;
        expect(second.rawBody).toBe(first!.rawBody);
        expect(parseJson<{ id: string }>(second.rawBody).id).toBe(eventId);
        expect(second.headers['x-svc-delivery']).not.toBe(first!.headers['x-svc-delivery']);
        const [done] = await env.database.db
          .selectFrom('webhook_deliveries')
          .selectAll()
          .where('webhook_id', '=', id)
          .execute();
        expect(done).toMatchObject({ status: 'succeeded', attempt_count: 1, lease_expires_at: null });
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  );
});
