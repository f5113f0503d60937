// SQL for the delivery queue: due deliveries, claims (a lease, FOR UPDATE SKIP LOCKED, refused on an
// endpoint switched off or whose deletion has begun, and for deliveries a switch-off dropped), releases,
// test deliveries, redeliveries, the clean-up after a switch-off or deletion, and the API's listing.
import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { WebhookDeliveriesTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';
import { readPageAndTotal, type PageStart } from '../database/keyset.js';

/** The states a delivery moves through. */
export type DeliveryStatus = WebhookDeliveriesTable['status'];

/**
 * A delivery with the kind of its event, as listed; `dropped` when it is still stored as pending but a
 * switch-off of its endpoint dropped it (it is abandoned: the clean-up has not marked it yet).
 */
export type DeliveryRow = Selectable<WebhookDeliveriesTable> & { event: string; dropped: boolean };

/** An event as stored in the outbox. */
export interface StoredEvent {
  id: string;
  kind: string;
  data: unknown;
  createdAt: Date;
  /** The W3C traceparent of the request that caused it, for the logs of its deliveries. */
  traceparent: string | null;
  /** Whether it happened in live mode (its org's mode). */
  livemode: boolean;
}

/** A delivery claimed for one attempt: leased to `lease.owner` until `lease.expiresAt`, with what to send where. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  orgId: string;
  attemptCount: number;
  /** When the delivery was queued: with the event for a new event, later for a redelivery. */
  createdAt: Date;
  lease: { owner: string; expiresAt: Date };
  event: StoredEvent;
  /** The endpoint as it was at the claim: its URL and its live secrets (newest first). */
  endpoint: { url: string; secrets: string[] };
}

interface ClaimedRow {
  id: string;
  webhook_id: string;
  org_id: string;
  attempt_count: number;
  created_at: Date;
  lease_owner: string;
  lease_expires_at: Date;
  event_id: string;
  kind: string;
  data: unknown;
  event_created_at: Date;
  traceparent: string | null;
  livemode: boolean;
  url: string;
  secret: string;
  previous_secrets: string[];
}

/** The endpoint's replaced secrets still signing at `now`, newest first, as a text array. */
function liveSecrets(table: string, now: Date) {
  return sql<string[]>`ARRAY(
    SELECT p->>'secret' FROM jsonb_array_elements(${sql.ref(`${table}.previous_secrets`)}) AS p
    WHERE (p->>'expires_at')::timestamptz > ${now} ORDER BY p->>'expires_at' DESC)`;
}

function claimedOf(row: ClaimedRow): ClaimedDelivery {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    orgId: row.org_id,
    attemptCount: row.attempt_count,
    createdAt: row.created_at,
    lease: { owner: row.lease_owner, expiresAt: row.lease_expires_at },
    event: {
      id: row.event_id,
      kind: row.kind,
      data: row.data,
      createdAt: row.event_created_at,
      traceparent: row.traceparent,
      livemode: row.livemode,
    },
    endpoint: {
      url: row.url,
      secrets: [row.secret, ...row.previous_secrets],
    },
  };
}

/** A due delivery worth claiming: its id, endpoint and org. */
export interface DueDelivery {
  id: string;
  webhook_id: string;
  org_id: string;
}

/**
 * Due, unleased deliveries worth claiming, at most `perEndpoint` per endpoint and `perOrg` per org,
 * none of the `skipEndpoints` or `skipOrgs` nor of endpoints switched off or being deleted, in turns: every org's
 * oldest due delivery before any org's second, so an org with a large backlog cannot push another's
 * first attempt back, however large the backlog. The endpoints with pending deliveries are walked
 * along an index (one probe each) and each one's oldest due deliveries read from it, so the cost
 * grows with the endpoints that have work, not with the backlog. A read without locks:
 * claimDeliveries decides who gets them.
 */
export async function findDueDeliveries(
  db: Db,
  now: Date,
  options: {
    perEndpoint: number;
    perOrg: number;
    limit: number;
    skipEndpoints: string[];
    skipOrgs: string[];
  },
): Promise<DueDelivery[]> {
  const { rows } = await sql<DueDelivery>`
    WITH RECURSIVE endpoints AS (
      (SELECT webhook_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY webhook_id LIMIT 1)
      UNION ALL
      SELECT (SELECT d.webhook_id FROM webhook_deliveries d
              WHERE d.status = 'pending' AND d.webhook_id > e.webhook_id ORDER BY d.webhook_id LIMIT 1)
      FROM endpoints e WHERE e.webhook_id IS NOT NULL
    )
    SELECT id, webhook_id, org_id FROM (
      SELECT due.id, due.webhook_id, due.org_id, due.next_attempt_at, due.seq,
             row_number() OVER (PARTITION BY due.org_id ORDER BY due.next_attempt_at, due.seq) AS org_turn
      FROM endpoints e
      JOIN webhooks w ON w.id = e.webhook_id AND w.deleted_at IS NULL AND w.active
      CROSS JOIN LATERAL (
        SELECT d.id, d.webhook_id, d.org_id, d.next_attempt_at, d.seq FROM webhook_deliveries d
        WHERE d.webhook_id = e.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= ${now}
          AND d.seq >= w.dropped_before_seq
          AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ${now})
        ORDER BY d.next_attempt_at, d.seq
        LIMIT ${options.perEndpoint}
      ) AS due
      WHERE e.webhook_id <> ALL(${options.skipEndpoints}::uuid[]) AND w.org_id <> ALL(${options.skipOrgs}::uuid[])
    ) AS ranked
    WHERE org_turn <= ${options.perOrg}
    ORDER BY org_turn, next_attempt_at, seq
    LIMIT ${options.limit}`.execute(db);
  return rows;
}

/**
 * Leases those of `ids` that are still due and unleased to `lease.owner` until `lease.expiresAt`,
 * skipping rows another process is claiming right now, deliveries to endpoints switched off or whose
 * deletion has begun, and deliveries a switch-off dropped; returns them with their events and
 * endpoints. The endpoint's state is checked in this statement, with its row key-share-locked: a
 * switch-off or deletion (which lock the row first, lockWebhookAgainstClaims) waits for a claim in
 * progress and then sees its lease, and a claim that waits for one of them sees its change. Each id is
 * looked up by its primary key in a lateral lookup fenced off by OFFSET 0: given the ids as one array,
 * the planner could pick a partial index of pending deliveries instead, and on statistics taken before
 * a backlog it did, reading every due delivery to find a few dozen.
 */
export async function claimDeliveries(
  db: Db,
  ids: string[],
  lease: { now: Date; owner: string; expiresAt: Date },
): Promise<ClaimedDelivery[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<ClaimedRow>`
    WITH claimable AS (
      SELECT d.id FROM unnest(${ids}::uuid[]) AS k(id)
      CROSS JOIN LATERAL (
        SELECT d.id, d.webhook_id, d.seq FROM webhook_deliveries d
        WHERE d.id = k.id AND d.status = 'pending' AND d.next_attempt_at <= ${lease.now}
          AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ${lease.now})
        OFFSET 0
        FOR UPDATE SKIP LOCKED
      ) AS d
      JOIN webhooks w ON w.id = d.webhook_id
      WHERE w.deleted_at IS NULL AND w.active AND d.seq >= w.dropped_before_seq
      FOR KEY SHARE OF w
    )
    UPDATE webhook_deliveries AS d SET lease_expires_at = ${lease.expiresAt}, lease_owner = ${lease.owner}
    FROM claimable AS c, events AS e, webhooks AS w
    WHERE d.id = c.id AND e.id = d.event_id AND w.id = d.webhook_id
    RETURNING d.id, d.webhook_id, d.org_id, d.attempt_count, d.created_at, d.lease_owner, d.lease_expires_at,
              e.id AS event_id, e.kind, e.data, e.created_at AS event_created_at, e.traceparent, e.livemode,
              w.url, w.secret,
              ${liveSecrets('w', lease.now)} AS previous_secrets`.execute(db);
  return rows.map(claimedOf);
}

/**
 * Records a test event and a delivery of it to the org's endpoint, already claimed by `lease.owner`, in
 * one transaction, with `alsoInTransaction`'s writes (an audit entry). 'not_found' when the org has no
 * such endpoint (or its deletion has begun); 'busy' when the org already has `maxInFlight` test
 * deliveries out on lease, in any process.
 */
export async function insertClaimedTestDelivery(
  db: Db,
  test: { orgId: string; webhookId: string; event: Omit<StoredEvent, 'livemode'>; maxInFlight: number },
  lease: { now: Date; owner: string; expiresAt: Date },
  alsoInTransaction: (trx: Db) => Promise<void> = () => Promise.resolve(),
): Promise<ClaimedDelivery | 'not_found' | 'busy'> {
  return db.transaction().execute(async (trx) => {
    const endpoint = await trx
      .selectFrom('webhooks')
      .select(['id', 'url', 'secret'])
      .select(liveSecrets('webhooks', lease.now).as('previous_secrets'))
      .where('id', '=', test.webhookId)
      .where('org_id', '=', test.orgId)
      .where('deleted_at', 'is', null)
      .forKeyShare()
      .executeTakeFirst();
    if (!endpoint) return 'not_found';
    // One org's test sends are counted one transaction at a time.
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`test-sends-of:${test.orgId}`}, 0))`.execute(trx);
    const { count } = await trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('events as e', 'e.id', 'd.event_id')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('d.org_id', '=', test.orgId)
      .where('d.lease_expires_at', '>', lease.now)
      .where('e.kind', '=', 'webhook.test')
      .executeTakeFirstOrThrow();
    if (Number(count) >= test.maxInFlight) return 'busy';
    const { event } = test;
    const { livemode } = await trx
      .insertInto('events')
      .values({
        id: event.id,
        org_id: test.orgId,
        kind: event.kind,
        data: JSON.stringify(event.data),
        created_at: event.createdAt,
        traceparent: event.traceparent,
      })
      .returning('livemode')
      .executeTakeFirstOrThrow();
    const delivery = await trx
      .insertInto('webhook_deliveries')
      .values({
        webhook_id: test.webhookId,
        org_id: test.orgId,
        event_id: event.id,
        status: 'pending',
        next_attempt_at: lease.now,
        lease_expires_at: lease.expiresAt,
        lease_owner: lease.owner,
        created_at: lease.now,
      })
      .returning(['id', 'attempt_count'])
      .executeTakeFirstOrThrow();
    await alsoInTransaction(trx);
    return claimedOf({
      id: delivery.id,
      webhook_id: test.webhookId,
      org_id: test.orgId,
      attempt_count: delivery.attempt_count,
      created_at: lease.now,
      lease_owner: lease.owner,
      lease_expires_at: lease.expiresAt,
      event_id: event.id,
      kind: event.kind,
      data: event.data,
      event_created_at: event.createdAt,
      traceparent: event.traceparent,
      livemode,
      url: endpoint.url,
      secret: endpoint.secret,
      previous_secrets: endpoint.previous_secrets,
    });
  });
}

/** Gives a lease back without an attempt (the send was aborted): the delivery is due again at once. */
export async function releaseLease(db: Db, lease: { deliveryId: string; owner: string; expiresAt: Date }) {
  await db
    .updateTable('webhook_deliveries')
    .set({ lease_expires_at: null, lease_owner: null })
    .where('id', '=', lease.deliveryId)
    .where('lease_owner', '=', lease.owner)
    .where('lease_expires_at', '=', lease.expiresAt)
    .execute();
}

/** One step of a walk over an endpoint's deliveries in seq order: rows it changed, and where it stopped. */
export interface SeqBatch {
  count: number;
  /** The highest seq the step reached; null when it found nothing past `afterSeq`. */
  lastSeq: string | null;
}

/**
 * Marks as abandoned up to `limit` of the endpoint's pending deliveries that a switch-off dropped, the
 * next ones in seq order past `afterSeq` (so no step rescans the rows earlier steps left behind). Rows
 * another statement holds are passed over: the clean-up job's next sweep marks them.
 */
export async function abandonDroppedDeliveries(
  db: Db,
  webhookId: string,
  afterSeq: string,
  limit: number,
): Promise<SeqBatch> {
  return runSeqBatch(
    db,
    sql`
    WITH batch AS (
      SELECT d.id, d.seq FROM webhook_deliveries d
      WHERE d.webhook_id = ${webhookId} AND d.status = 'pending' AND d.seq > ${afterSeq}
        AND d.seq < (SELECT w.dropped_before_seq FROM webhooks w WHERE w.id = ${webhookId})
      ORDER BY d.seq LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), changed AS (
      UPDATE webhook_deliveries AS d SET status = 'abandoned', next_attempt_at = NULL, lease_expires_at = NULL,
                                         lease_owner = NULL
      FROM batch WHERE d.id = batch.id
      RETURNING d.id
    )
    ${SEQ_BATCH_RESULT}`,
  );
}

/**
 * Deletes up to `limit` deliveries (their attempts cascade) of an endpoint whose deletion has begun, the
 * next ones in seq order past `afterSeq`.
 */
export async function deleteDeliveriesOfDeletedWebhook(
  db: Db,
  webhookId: string,
  afterSeq: string,
  limit: number,
): Promise<SeqBatch> {
  return runSeqBatch(
    db,
    sql`
    WITH batch AS (
      SELECT d.id, d.seq FROM webhook_deliveries d
      WHERE d.webhook_id = ${webhookId} AND d.seq > ${afterSeq}
        AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = ${webhookId} AND w.deleted_at IS NOT NULL)
      ORDER BY d.seq LIMIT ${limit}
    ), changed AS (
      DELETE FROM webhook_deliveries AS d USING batch WHERE d.id = batch.id RETURNING d.id
    )
    ${SEQ_BATCH_RESULT}`,
  );
}

/** The last part of a SeqBatch statement: its CTEs `batch` (the rows reached) and `changed` (those changed). */
const SEQ_BATCH_RESULT = sql`SELECT (SELECT count(*) FROM changed) AS count, (SELECT max(seq) FROM batch) AS last_seq`;

/** Runs a statement ending in SEQ_BATCH_RESULT and reads its one row. */
async function runSeqBatch(db: Db, statement: RawBuilder<unknown>): Promise<SeqBatch> {
  const { rows } = await statement.$castTo<{ count: string; last_seq: string | null }>().execute(db);
  return { count: Number(rows[0]!.count), lastSeq: rows[0]!.last_seq };
}

/** Whether any delivery to the endpoint is out on a lease that has not lapsed by `now`. */
export async function hasLeasesOut(db: Db, webhookId: string, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('webhook_id', '=', webhookId)
    .where('lease_expires_at', '>', now)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Inserts a pending delivery of an existing event to an endpoint, due at `dueAt`, and returns its id. */
export async function insertPendingDelivery(
  trx: Db,
  values: { webhookId: string; orgId: string; eventId: string; dueAt: Date; redelivery?: boolean },
): Promise<string> {
  const row = await trx
    .insertInto('webhook_deliveries')
    .values({
      webhook_id: values.webhookId,
      org_id: values.orgId,
      event_id: values.eventId,
      status: 'pending',
      next_attempt_at: values.dueAt,
      created_at: values.dueAt,
      redelivery: values.redelivery ?? false,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Whether a pending delivery was dropped by a switch-off of its endpoint (`w`). */
const droppedByEndpoint = sql<boolean>`(webhook_deliveries.status = 'pending' AND webhook_deliveries.seq < w.dropped_before_seq)`;

function deliveriesWithEvent(db: Db) {
  return db
    .selectFrom('webhook_deliveries')
    .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
    .innerJoin('webhooks as w', 'w.id', 'webhook_deliveries.webhook_id')
    .selectAll('webhook_deliveries')
    .select('events.kind as event')
    .select(droppedByEndpoint.as('dropped'));
}

/** Deliveries in `status` as the API shows it: one a switch-off dropped is abandoned, not pending. */
function inShownStatus(status: DeliveryStatus) {
  if (status === 'pending') return sql<boolean>`(webhook_deliveries.status = 'pending' AND NOT ${droppedByEndpoint})`;
  if (status === 'abandoned') return sql<boolean>`(webhook_deliveries.status = 'abandoned' OR ${droppedByEndpoint})`;
  return sql<boolean>`(webhook_deliveries.status = ${status})`;
}

/** One delivery of an endpoint, or undefined. */
export async function findDeliveryRow(db: Db, webhookId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
  return deliveriesWithEvent(db)
    .where('webhook_deliveries.webhook_id', '=', webhookId)
    .where('webhook_deliveries.id', '=', deliveryId)
    .executeTakeFirst();
}

/**
 * One page of an endpoint's deliveries, newest first (by their sequence number), optionally in one
 * status, with the total: after `offset` deliveries, or next to the delivery `cursor` on its `side`
 * (`more` then tells whether deliveries lie beyond the page; none passes an unknown cursor).
 */
export async function listDeliveryRows(
  db: Db,
  webhookId: string,
  page: { limit: number; status?: DeliveryStatus } & PageStart,
): Promise<{ rows: DeliveryRow[]; total: number; more: boolean }> {
  const rows = deliveriesWithEvent(db)
    .where('webhook_deliveries.webhook_id', '=', webhookId)
    .$if(page.status !== undefined, (qb) => qb.where(inShownStatus(page.status!)));
  return readPageAndTotal(
    { rows, table: 'webhook_deliveries', columns: ['seq'] },
    () => countDeliveries(db, webhookId, page.status),
    { limit: page.limit, start: page },
  );
}

/**
 * How many of the endpoint's deliveries are in `status` as the API shows it (in any status when
 * undefined): the per-status counts kept by triggers, not a count over the endpoint's history, less (for
 * pending) or plus (for abandoned) the deliveries a switch-off dropped that its clean-up has not marked
 * yet (an index range count). One statement, so both are read in one snapshot: read apart, a clean-up
 * batch committing between them was counted as pending still.
 */
async function countDeliveries(db: Db, webhookId: string, status: DeliveryStatus | undefined): Promise<number> {
  const corrected = status === 'pending' || status === 'abandoned';
  const { rows } = await sql<{ counted: string; dropped: string }>`
    SELECT
      (SELECT coalesce(sum(count), 0) FROM webhook_delivery_counts
       WHERE webhook_id = ${webhookId} ${status === undefined ? sql`` : sql`AND status = ${status}`}) AS counted,
      ${
        corrected
          ? sql`(SELECT count(*) FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id
                 WHERE d.webhook_id = ${webhookId} AND d.status = 'pending' AND d.seq < w.dropped_before_seq)`
          : sql`0`
      } AS dropped`.execute(db);
  const { counted, dropped } = rows[0]!;
  return Number(counted) + (status === 'pending' ? -Number(dropped) : status === 'abandoned' ? Number(dropped) : 0);
}

/**
 * Deletes up to `limit` finished deliveries (succeeded, failed or abandoned) created before `before`
 * that no kept attempt of the delivery log refers to; returns how many.
 */
export async function deleteOldDeliveries(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM webhook_deliveries WHERE id IN (
      SELECT d.id FROM webhook_deliveries d
      WHERE d.status <> 'pending' AND d.created_at < ${before}
        AND NOT EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id)
      LIMIT ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Makes the org's redeliveries wait for each other until the transaction ends, so that the check for a
 * pending one and the count against the cap see every other redelivery's insert.
 */
export async function lockOrgRedeliveries(trx: Db, orgId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`redeliver:${orgId}`}, 0))`.execute(trx);
}

/** The id of a pending delivery of `eventId` to the endpoint (not one a switch-off dropped), if there is one. */
export async function findPendingDeliveryOfEvent(
  trx: Db,
  webhookId: string,
  eventId: string,
): Promise<string | undefined> {
  const row = await trx
    .selectFrom('webhook_deliveries')
    .innerJoin('webhooks as w', 'w.id', 'webhook_deliveries.webhook_id')
    .select('webhook_deliveries.id')
    .where('webhook_deliveries.webhook_id', '=', webhookId)
    .where('webhook_deliveries.event_id', '=', eventId)
    .where('webhook_deliveries.status', '=', 'pending')
    .whereRef('webhook_deliveries.seq', '>=', 'w.dropped_before_seq')
    .orderBy('webhook_deliveries.seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

/** How many redeliveries the org has pending. */
export async function countPendingRedeliveries(trx: Db, orgId: string): Promise<number> {
  const row = await trx
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .where('status', '=', 'pending')
    .where('redelivery', '=', true)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A delivery by id, whatever its org (for operators), or undefined. */
export async function findAnyDelivery(
  db: Db,
  id: string,
): Promise<{ id: string; webhook_id: string; org_id: string; event_id: string } | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .select(['id', 'webhook_id', 'org_id', 'event_id'])
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * The events of the endpoint's deliveries that failed, were abandoned or are waiting for a retry after
 * a failed attempt, created at or after `since`, and that no delivery to the endpoint has brought (a
 * later retry or redelivery succeeded), oldest first, at most `limit`: what an operator's replay sends
 * again (or, for one waiting, makes due now).
 */
export async function findUnsuccessfulEvents(db: Db, webhookId: string, since: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select('event_id')
    .where('webhook_id', '=', webhookId)
    .where((eb) =>
      eb.or([
        eb('status', 'in', ['failed', 'abandoned']),
        eb.and([eb('status', '=', 'pending'), eb('attempt_count', '>', 0)]),
      ]),
    )
    .where('created_at', '>=', since)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('webhook_deliveries as delivered')
            .select('delivered.id')
            .whereRef('delivered.webhook_id', '=', 'webhook_deliveries.webhook_id')
            .whereRef('delivered.event_id', '=', 'webhook_deliveries.event_id')
            .where('delivered.status', '=', 'succeeded'),
        ),
      ),
    )
    .groupBy('event_id')
    .orderBy((eb) => eb.fn.min('seq'))
    .limit(limit)
    .execute();
  return rows.map((row) => row.event_id);
}

/**
 * Makes the endpoint's delivery, pending and waiting for its next attempt (not dropped by a switch-off,
 * not out on a lease), due at `now`, for the worker to claim as any due delivery. False when it was
 * not waiting: already due or being sent, or no longer pending.
 */
export async function makeDeliveryDueNow(db: Db, webhookId: string, deliveryId: string, now: Date): Promise<boolean> {
  const result = await sql`
    UPDATE webhook_deliveries AS d SET next_attempt_at = ${now}
    FROM webhooks AS w
    WHERE d.id = ${deliveryId} AND d.webhook_id = ${webhookId} AND w.id = d.webhook_id
      AND d.status = 'pending' AND d.seq >= w.dropped_before_seq AND d.next_attempt_at > ${now}
      AND (d.lease_expires_at IS NULL OR d.lease_expires_at <= ${now})`.execute(db);
  return Number(result.numAffectedRows ?? 0) > 0;
}
