// SQL for the event outbox: event rows, their fan-out into pending deliveries, and the wake-up notice.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import { prepareQuery, type Arg } from '../database/prepared-query.js';
import { countRows, readPageAndTotal, type PageStart } from '../database/keyset.js';
import { DELIVERY_CHANNEL } from './channels.js';

/** An event as stored. */
export interface EventRow {
  id: string;
  orgId: string;
  kind: string;
  data: unknown;
  createdAt?: Date;
  /** The W3C traceparent of the request that caused the event. */
  traceparent?: string | null;
}

type NewEvent = { id: string; orgId: string; kind: string; data: string; traceparent: string | null };

/** One event created now: the common case, prepared once. */
const insertOneEvent = prepareQuery((db, arg: Arg<NewEvent>) =>
  db.insertInto('events').values({
    id: arg('id'),
    org_id: arg('orgId'),
    kind: arg('kind'),
    data: arg('data'),
    traceparent: arg('traceparent'),
  }),
);

/** Inserts events (created now unless given). */
export async function insertEvents(trx: Db, events: EventRow[]): Promise<void> {
  if (events.length === 0) return;
  const [only] = events;
  if (events.length === 1 && !only!.createdAt) {
    const { id, orgId, kind, data, traceparent } = only!;
    await insertOneEvent.execute(trx, {
      id,
      orgId,
      kind,
      data: JSON.stringify(data),
      traceparent: traceparent ?? null,
    });
    return;
  }
  await trx
    .insertInto('events')
    .values(
      events.map((event) => ({
        id: event.id,
        org_id: event.orgId,
        kind: event.kind,
        data: JSON.stringify(event.data),
        traceparent: event.traceparent ?? null,
        ...(event.createdAt ? { created_at: event.createdAt } : {}),
      })),
    )
    .execute();
}

/**
 * Queues a pending delivery, due now, of each of the org's `events` to every active endpoint of the org
 * subscribed to the event's kind, in the order given; returns how many were queued. It locks the
 * endpoints it queues for (FOR KEY SHARE), so a deletion waits for this transaction, and an endpoint
 * whose deletion has begun (switched off) is skipped.
 */
export async function queueDeliveries(
  trx: Db,
  orgId: string,
  events: ReadonlyArray<{ id: string; kind: string }>,
): Promise<number> {
  const queued = await queueDeliveriesStatement.run(trx, {
    orgId,
    ids: events.map((event) => event.id),
    kinds: events.map((event) => event.kind),
  });
  return Number(queued.numAffectedRows ?? 0);
}

const queueDeliveriesStatement = prepareQuery(
  (_db, arg: Arg<{ orgId: string; ids: string[]; kinds: string[] }>) => sql`
    INSERT INTO webhook_deliveries (webhook_id, org_id, event_id, status, next_attempt_at)
    SELECT w.id, w.org_id, e.id, 'pending', now()
    FROM webhooks w
    JOIN unnest(${arg('ids')}::text[], ${arg('kinds')}::text[]) WITH ORDINALITY AS e(id, kind, position)
      ON e.kind = ANY(w.events)
    WHERE w.org_id = ${arg('orgId')}::uuid AND w.active AND w.deleted_at IS NULL
    ORDER BY e.position, w.id
    FOR KEY SHARE OF w`,
);

/** Wakes the listening delivery workers once the transaction commits. */
export async function notifyDeliveryWorkers(trx: Db, payload: string): Promise<void> {
  await notifyStatement.execute(trx, { payload });
}

const notifyStatement = prepareQuery(
  (_db, arg: Arg<{ payload: string }>) => sql`SELECT pg_notify(${DELIVERY_CHANNEL}, ${arg('payload')})`,
);

/** Deletes up to `limit` events created before `before` that no delivery refers to any more; returns how many. */
export async function deleteOldEvents(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM events WHERE id IN (
      SELECT e.id FROM events e
      WHERE e.created_at < ${before}
        AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
      LIMIT ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** The kind of the events `POST /webhooks/{id}/test` makes: listed only when asked for by kind. */
const TEST_KIND = 'webhook.test';

/** The filters of the event list. */
export interface EventFilter {
  kind?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

/**
 * The org's events matching `filter`: test events only when `filter.kind` asks for them. Times compare
 * as the API shows them, to the millisecond: an event stored at 09:30:00.973750 shows 09:30:00.973 and
 * is neither after nor before that moment.
 */
function matchingEvents(db: Db, orgId: string, filter: EventFilter) {
  return db
    .selectFrom('events')
    .where('org_id', '=', orgId)
    .where('kind', filter.kind === undefined ? '<>' : '=', filter.kind ?? TEST_KIND)
    .$if(filter.createdAfter !== undefined, (qb) =>
      qb.where('created_at', '>=', new Date(filter.createdAfter!.getTime() + 1)),
    )
    .$if(filter.createdBefore !== undefined, (qb) => qb.where('created_at', '<', filter.createdBefore!));
}

/**
 * One page of the org's events matching `filter`, newest first (ties by id), starting at `start`, and
 * how many events match in all; `more` tells whether a cursor page has more beyond it. A cursor must be
 * an event of the org (see findEventRow).
 */
export async function listEventRows(
  db: Db,
  orgId: string,
  filter: EventFilter,
  page: { limit: number; start: PageStart },
): Promise<{ rows: ReadEvent[]; total: number; more: boolean }> {
  const matching = matchingEvents(db, orgId, filter);
  const { rows, total, more } = await readPageAndTotal(
    {
      rows: matching.select(['id', 'org_id', 'kind', 'data', 'created_at', 'livemode']),
      table: 'events',
      columns: ['created_at', 'id'],
    },
    () => countRows(matching),
    page,
  );
  return { rows: rows.map(eventOf), total, more };
}

/** An event as the API reads it back: the stored row with its mode. */
export type ReadEvent = ReturnType<typeof eventOf>;

function eventOf(row: {
  id: string;
  org_id: string;
  kind: string;
  data: unknown;
  created_at: Date;
  livemode: boolean;
}) {
  return {
    id: row.id,
    orgId: row.org_id,
    kind: row.kind,
    data: row.data,
    createdAt: row.created_at,
    livemode: row.livemode,
  };
}

/** The org's event with this id, or undefined (also for another org's event). */
export async function findEventRow(db: Db, orgId: string, id: string): Promise<ReadEvent | undefined> {
  const row = await db
    .selectFrom('events')
    .select(['id', 'org_id', 'kind', 'data', 'created_at', 'livemode'])
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return row && eventOf(row);
}
