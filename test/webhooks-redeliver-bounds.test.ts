// Redelivery is bounded: asking for the same event again while one is pending answers that one (however
// many requests race), and an org's pending redeliveries are capped (REDELIVERIES_PER_ORG) with a 429.
// A redelivery that races a switch-off of its endpoint waits for it and is refused; one that races the
// endpoint's removal waits for it and answers 404.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contactCreated, emit, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';
import { waitFor } from './support/calls.js';
import { blocksAnother } from './support/database.js';
import type { Db } from '../src/database/connect.js';
import { markWebhookDeleted, removeDeletedWebhook, updateWebhookRow } from '../src/webhooks/queries.js';

const CAP = 3;

let env: WebhookEnv;
let target: Receiver;

beforeAll(async () => {
  env = await webhookEnv({ config: { redeliveriesPerOrg: CAP } });
  target = await startReceiver();
}, 60_000);

afterAll(async () => {
  await target?.close();
  await env?.close();
});

/** Emits `count` contact.created events to a new endpoint and returns it with its delivery ids. */
async function endpointWithDeliveries(count: number): Promise<{ id: string; deliveries: string[] }> {
  const { id } = await register(env, target.url);
  for (let i = 0; i < count; i += 1) await emit(env, 'contact.created', contactCreated());
  const { data } = await env.app.client(env.org.key).GET('/webhooks/{id}/deliveries', {
    params: { path: { id }, query: { limit: 100 } },
  });
  return { id, deliveries: data!.data.map((delivery) => delivery.id) };
}

describe('POST /webhooks/{id}/deliveries/{delivery_id}/redeliver, asked many times', () => {
  it('queues one delivery of the event, and answers every request with it while it is pending', async () => {
    // No delivery worker runs here: what is queued stays pending.
    const { id, deliveries } = await endpointWithDeliveries(1);
    const client = env.app.client(env.org.key);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        client.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
          params: { path: { id, delivery_id: deliveries[0]! } },
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.response.status);
    expect(statuses.filter((status) => status !== 202)).toEqual([]);
    // The event's first delivery is still pending (no worker): every request is answered with it.
    expect(new Set(answers.map((answer) => answer.data!.data.id))).toEqual(new Set([deliveries[0]]));
    const rows = await env.database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'redelivery'])
      .where('webhook_id', '=', id)
      .execute();
    expect(rows).toEqual([{ id: deliveries[0], redelivery: false }]);
  });

  it('sends the event once more after its delivery finished, however many requests race', async () => {
    const { id, deliveries } = await endpointWithDeliveries(1);
    const worker = env.worker({ start: true });
    await expect
      .poll(
        async () => {
          const row = await env.database.db
            .selectFrom('webhook_deliveries')
            .select('status')
            .where('id', '=', deliveries[0]!)
            .executeTakeFirstOrThrow();
          return row.status;
        },
        { timeout: 15_000 },
      )
      .toBe('succeeded');
    await worker.stop(0);
    const client = env.app.client(env.org.key);
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        client.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
          params: { path: { id, delivery_id: deliveries[0]! } },
        }),
      ),
    );
    expect(answers.map((answer) => answer.response.status).filter((status) => status !== 202)).toEqual([]);
    const ids = new Set(answers.map((answer) => answer.data!.data.id));
    expect(ids.size).toBe(1);
    expect(ids.has(deliveries[0]!)).toBe(false);
    const pending = await env.database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'redelivery', 'status'])
      .where('webhook_id', '=', id)
      .where('status', '=', 'pending')
      .execute();
    expect(pending).toEqual([{ id: [...ids][0], redelivery: true, status: 'pending' }]);
  });
});

describe("an org's pending redeliveries", () => {
  it(`are capped at REDELIVERIES_PER_ORG (${CAP} here): the next gets 429 with Retry-After`, async () => {
    // Deliveries that are finished, so each redelivery is a new one; no worker sends them.
    const { id, deliveries } = await endpointWithDeliveries(CAP + 1);
    await env.database.db
      .updateTable('webhook_deliveries')
      .set({ status: 'succeeded', next_attempt_at: null })
      .where('webhook_id', '=', id)
      .execute();
    // Redeliveries made by the tests above count against the same org: start from none pending.
    await env.database.db
      .updateTable('webhook_deliveries')
      .set({ status: 'abandoned', next_attempt_at: null })
      .where('org_id', '=', env.org.orgId)
      .where('redelivery', '=', true)
      .execute();
    const client = env.app.client(env.org.key);
    const redeliver = (deliveryId: string) =>
      client.POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
        params: { path: { id, delivery_id: deliveryId } },
      });
    for (const deliveryId of deliveries.slice(0, CAP)) expect((await redeliver(deliveryId)).response.status).toBe(202);
    const refused = await redeliver(deliveries[CAP]!);
    expect(refused.response.status).toBe(429);
    expect(refused.error?.error.code).toBe('too_many_requests');
    expect(refused.response.headers.get('retry-after')).toBe('30');
    // Asking again for one already pending is not a new redelivery: it is answered, not refused.
    expect((await redeliver(deliveries[0]!)).response.status).toBe(202);
  });
});

type Redelivery = { response: Response; error?: { error: { code: string } } };

/**
 * With no other redelivery of the org pending, asks for a redelivery of the endpoint's delivery while
 * `change` runs in a transaction held open until the redelivery waits for it; resolves the answer.
 */
async function redeliverDuring(
  id: string,
  deliveryId: string,
  change: (trx: Db) => Promise<void>,
  what: string,
): Promise<Redelivery> {
  const { db } = env.database;
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'abandoned', next_attempt_at: null })
    .where('org_id', '=', env.org.orgId)
    .where('status', '=', 'pending')
    .execute();
  let redelivering: Promise<Redelivery> | undefined;
  await db.transaction().execute(async (trx) => {
    await change(trx);
    redelivering = env.app.client(env.org.key).POST('/webhooks/{id}/deliveries/{delivery_id}/redeliver', {
      params: { path: { id, delivery_id: deliveryId } },
    });
    await waitFor(`the redelivery to wait for ${what}`, () => blocksAnother(trx), 5_000);
  });
  return redelivering!;
}

describe('a redelivery racing a switch-off of its endpoint', () => {
  it('waits for the switch-off, then is refused with 409 and leaves nothing pending', async () => {
    const { id, deliveries } = await endpointWithDeliveries(1);
    const { db } = env.database;
    // The delivery is finished: a redelivery would queue one.
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed', next_attempt_at: null })
      .where('webhook_id', '=', id)
      .execute();
    // The switch-off as PATCH /webhooks/{id} makes it.
    const refused = await redeliverDuring(
      id,
      deliveries[0]!,
      async (trx) => {
        await updateWebhookRow(trx, env.org.orgId, id, { active: false, now: new Date() });
      },
      'the switch-off',
    );
    expect(refused.response.status).toBe(409);
    expect(refused.error?.error.code).toBe('invalid_state');
    const pending = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', id)
      .where('status', '=', 'pending')
      .execute();
    expect(pending).toEqual([]);
  });
});

describe('a redelivery racing the removal of its endpoint', () => {
  it('waits for the removal, then answers 404 not_found, not a failure', async () => {
    const { id, deliveries } = await endpointWithDeliveries(1);
    // The endpoint's deletion, marked and removed: the redelivery saw the endpoint before, as one that
    // waited its turn behind other redeliveries does.
    const refused = await redeliverDuring(
      id,
      deliveries[0]!,
      async (trx) => {
        await markWebhookDeleted(trx, id, new Date());
        await removeDeletedWebhook(trx, id);
      },
      'the removal',
    );
    expect(refused.response.status).toBe(404);
    expect(refused.error?.error.code).toBe('not_found');
  });
});
