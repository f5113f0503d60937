// SQL for the delivery queue: due deliveries, leases (FOR UPDATE SKIP LOCKED), settling, listing.
import { sql, type Selectable } from 'kysely';
import type { WebhookDeliveriesTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';
import { DELIVERY_CHANNEL } from './outbox.js';

/** The states a delivery moves through. */
export type DeliveryStatus = WebhookDeliveriesTable['status'];

/** A delivery with the kind of its event, as listed. */
export type DeliveryRow = Selectable<WebhookDeliveriesTable> & { event: string };

/** A delivery leased by a worker, with everything needed to send it. */
export interface LeasedDelivery {
  id: string;
  webhookId: string;
  attemptCount: number;
  leaseExpiresAt: Date;
  event: { id: string; kind: string; data: unknown; createdAt: Date };
}

/**
 * Due, unleased deliveries worth claiming, oldest due first, at most `perEndpoint` per endpoint and none
 * of the `skipEndpoints`. A read without locks: leaseDeliveries decides who gets them.
 */
export async function findDueDeliveries(
  db: Db,
  now: Date,
  options: { perEndpoint: number; limit: number; skipEndpoints: string[] },
): Promise<Array<{ id: string; webhook_id: string }>> {
  const { rows } = await sql<{ id: string; webhook_id: string }>`
    SELECT id, webhook_id FROM (
      SELECT id, webhook_id, next_attempt_at, seq,
             row_number() OVER (PARTITION BY webhook_id ORDER BY next_attempt_at, seq) AS rank
      FROM (
        SELECT id, webhook_id, next_attempt_at, seq FROM webhook_deliveries
        WHERE status = 'pending' AND next_attempt_at <= ${now}
          AND (lease_expires_at IS NULL OR lease_expires_at <= ${now})
          AND webhook_id <> ALL(${options.skipEndpoints}::uuid[])
        ORDER BY next_attempt_at LIMIT 5000
      ) AS due
    ) AS ranked
    WHERE rank <= ${options.perEndpoint}
    ORDER BY next_attempt_at, seq
    LIMIT ${options.limit}`.execute(db);
  return rows;
}

/**
 * Leases those of `ids` that are still due and unleased until `leaseUntil`, skipping rows another
 * worker is claiming right now, and returns them with their events.
 */
export async function leaseDeliveries(db: Db, ids: string[], now: Date, leaseUntil: Date): Promise<LeasedDelivery[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<{
    id: string;
    webhook_id: string;
    attempt_count: number;
    lease_expires_at: Date;
    event_id: string;
    kind: string;
    data: unknown;
    event_created_at: Date;
  }>`
    UPDATE webhook_deliveries AS d SET lease_expires_at = ${leaseUntil}
    FROM events AS e
    WHERE e.id = d.event_id AND d.id IN (
      SELECT id FROM webhook_deliveries
      WHERE id = ANY(${ids}::uuid[]) AND status = 'pending' AND next_attempt_at <= ${now}
        AND (lease_expires_at IS NULL OR lease_expires_at <= ${now})
      FOR UPDATE SKIP LOCKED
    )
    RETURNING d.id, d.webhook_id, d.attempt_count, d.lease_expires_at,
              e.id AS event_id, e.kind, e.data, e.created_at AS event_created_at`.execute(db);
  return rows.map((row) => ({
    id: row.id,
    webhookId: row.webhook_id,
    attemptCount: row.attempt_count,
    leaseExpiresAt: row.lease_expires_at,
    event: { id: row.event_id, kind: row.kind, data: row.data, createdAt: row.event_created_at },
  }));
}

/**
 * Ends a lease with the delivery's new state. False (and nothing changed) when the lease is no longer
 * the caller's: it expired and another worker took the delivery over.
 */
export async function settleDelivery(
  trx: Db,
  lease: { id: string; leaseExpiresAt: Date },
  state: { status: DeliveryStatus; attemptCount: number; nextAttemptAt: Date | null },
): Promise<boolean> {
  const result = await trx
    .updateTable('webhook_deliveries')
    .set({
      status: state.status,
      attempt_count: state.attemptCount,
      next_attempt_at: state.nextAttemptAt,
      lease_expires_at: null,
    })
    .where('id', '=', lease.id)
    .where('lease_expires_at', '=', lease.leaseExpiresAt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Abandons every pending delivery of an endpoint (it was switched off); returns how many. */
export async function abandonPendingDeliveries(trx: Db, webhookId: string): Promise<number> {
  const result = await trx
    .updateTable('webhook_deliveries')
    .set({ status: 'abandoned', next_attempt_at: null, lease_expires_at: null })
    .where('webhook_id', '=', webhookId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Inserts a delivery of an existing event to an endpoint and returns its id. */
export async function insertDelivery(
  trx: Db,
  values: {
    webhookId: string;
    orgId: string;
    eventId: string;
    status: DeliveryStatus;
    attemptCount: number;
    nextAttemptAt: Date | null;
    createdAt: Date;
  },
): Promise<string> {
  const row = await trx
    .insertInto('webhook_deliveries')
    .values({
      webhook_id: values.webhookId,
      org_id: values.orgId,
      event_id: values.eventId,
      status: values.status,
      attempt_count: values.attemptCount,
      next_attempt_at: values.nextAttemptAt,
      created_at: values.createdAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Records an event in the outbox without fanning it out (a test event for one endpoint). */
export async function insertEventRow(
  trx: Db,
  event: { id: string; orgId: string; kind: string; data: unknown; createdAt: Date },
): Promise<void> {
  await trx
    .insertInto('events')
    .values({
      id: event.id,
      org_id: event.orgId,
      kind: event.kind,
      data: JSON.stringify(event.data),
      created_at: event.createdAt,
    })
    .execute();
}

/** Wakes listening workers once the transaction commits. */
export async function notifyDeliveryWorkers(trx: Db, eventId: string): Promise<void> {
  await sql`SELECT pg_notify(${DELIVERY_CHANNEL}, ${eventId})`.execute(trx);
}

function deliveriesWithEvent(db: Db) {
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
    .selectAll('webhook_deliveries')
    .select('events.kind as event');
}

/** One delivery of an endpoint, or undefined. */
export async function findDeliveryRow(db: Db, webhookId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
  return deliveriesWithEvent(db)
    .where('webhook_deliveries.webhook_id', '=', webhookId)
    .where('webhook_deliveries.id', '=', deliveryId)
    .executeTakeFirst();
}

/** One page of an endpoint's deliveries, newest first, optionally in one status, with the total. */
export async function listDeliveryRows(
  db: Db,
  webhookId: string,
  page: { limit: number; offset: number; status?: DeliveryStatus },
): Promise<{ rows: DeliveryRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    deliveriesWithEvent(db)
      .where('webhook_deliveries.webhook_id', '=', webhookId)
      .$if(page.status !== undefined, (qb) => qb.where('webhook_deliveries.status', '=', page.status!))
      .orderBy('webhook_deliveries.seq', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('webhook_id', '=', webhookId)
      .$if(page.status !== undefined, (qb) => qb.where('status', '=', page.status!))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.count) };
}
