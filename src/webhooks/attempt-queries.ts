// SQL for the delivery log: recording attempts (db/functions/record_webhook_attempt.sql), several in one
// statement, and reading the kept attempts back.
import { sql, type ExpressionBuilder, type Selectable } from 'kysely';
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';

/** A row of the delivery log. */
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/**
 * A delivery-log line: an attempt with the event it carried and the state its delivery is in now (one a
 * switch-off dropped is abandoned).
 */
export type DeliveryLogEntry = AttemptRow & {
  event_id: string;
  event: string;
  delivery_status: WebhookDeliveriesTable['status'];
};

/** The lease an attempt was made under: only its holder may record the attempt. */
export interface Lease {
  deliveryId: string;
  owner: string;
  expiresAt: Date;
}

/** The delivery's state after the attempt. */
export interface DeliveryState {
  status: WebhookDeliveriesTable['status'];
  attemptCount: number;
  nextAttemptAt: Date | null;
}

/** An attempt to log, with the rules the log keeps. */
export interface AttemptToLog {
  id: string;
  webhookId: string;
  statusCode: number | null;
  failureKind: string | null;
  excerpt: string | null;
  durationMs: number;
  attemptedAt: Date;
  /** False when the attempt says nothing about the endpoint's health (a payload we refused to send). */
  affectsHealth: boolean;
  /** Lines kept per endpoint. */
  logSize: number;
  /** How long every attempt must have failed before the endpoint is switched off, in ms. */
  disableAfterMs: number;
}

/** What recording an attempt came to: recorded (with its effect on the endpoint), or nothing written. */
export type RecordOutcome =
  | { outcome: 'recorded'; switchedOff: boolean; failingSince: Date | null; abandoned: number }
  | { outcome: 'gone' | 'lease_lost' };

/** One attempt to record with the lease it was made under and the delivery's state after it. */
export interface AttemptRecord {
  lease: Lease;
  state: DeliveryState;
  attempt: AttemptToLog;
}

/**
 * Records attempts in one statement and one commit, each as record_webhook_attempt does: ends the lease
 * with the new state, appends the attempt to the log (pruned to its size) and updates the endpoint's
 * health; nothing is written for an attempt whose endpoint is gone or whose lease is no longer the
 * caller's. Endpoint rows are locked in id order, so concurrent batches cannot deadlock each other.
 * Returns the outcomes in the order of `records`; database errors propagate and then nothing is written.
 */
export async function recordAttempts(db: Db, records: AttemptRecord[]): Promise<RecordOutcome[]> {
  if (records.length === 0) return [];
  const order = records
    .map((_, index) => index)
    .sort((a, b) => {
      const left = records[a]!.attempt.webhookId;
      const right = records[b]!.attempt.webhookId;
      return left < right ? -1 : left > right ? 1 : a - b;
    });
  const column = <T>(pick: (record: AttemptRecord) => T): T[] => order.map((index) => pick(records[index]!));
  const { rows } = await sql<{
    ord: string;
    outcome: RecordOutcome['outcome'];
    switched_off: boolean;
    failing_since: Date | null;
    abandoned: number;
  }>`
    SELECT a.ord, r.outcome, r.switched_off, r.failing_since, r.abandoned
    FROM unnest(
      ${column((r) => r.lease.deliveryId)}::uuid[], ${column((r) => r.lease.owner)}::text[],
      ${column((r) => r.lease.expiresAt)}::timestamptz[], ${column((r) => r.state.status)}::text[],
      ${column((r) => r.state.attemptCount)}::integer[], ${column((r) => r.state.nextAttemptAt)}::timestamptz[],
      ${column((r) => r.attempt.webhookId)}::uuid[], ${column((r) => r.attempt.id)}::uuid[],
      ${column((r) => r.attempt.statusCode)}::integer[], ${column((r) => r.attempt.failureKind)}::text[],
      ${column((r) => r.attempt.excerpt)}::text[], ${column((r) => r.attempt.durationMs)}::integer[],
      ${column((r) => r.attempt.attemptedAt)}::timestamptz[], ${column((r) => r.attempt.affectsHealth)}::boolean[],
      ${column((r) => r.attempt.logSize)}::integer[], ${column((r) => r.attempt.disableAfterMs / 1000)}::float8[]
    ) WITH ORDINALITY AS a(delivery, lease_owner, lease_expires_at, status, attempt_count, next_attempt_at,
                           webhook, attempt_id, status_code, failure_kind, excerpt, duration_ms, attempted_at,
                           affects_health, log_size, disable_after_secs, ord)
    CROSS JOIN LATERAL record_webhook_attempt(
      a.delivery, a.lease_owner, a.lease_expires_at, a.status, a.attempt_count, a.next_attempt_at, a.webhook,
      a.attempt_id, a.status_code, a.failure_kind, a.excerpt, a.duration_ms, a.attempted_at, a.affects_health,
      a.log_size, make_interval(secs => a.disable_after_secs)) AS r
    ORDER BY a.ord`.execute(db);
  const outcomes = new Array<RecordOutcome>(records.length);
  for (const row of rows) {
    const index = order[Number(row.ord) - 1]!;
    outcomes[index] =
      row.outcome === 'recorded'
        ? {
            outcome: 'recorded',
            switchedOff: row.switched_off,
            failingSince: row.failing_since,
            abandoned: row.abandoned,
          }
        : { outcome: row.outcome };
  }
  return outcomes;
}

/** The kept attempts of the given deliveries, newest first. */
export async function attemptsOfDeliveries(db: Db, deliveryIds: string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  return db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_id', 'in', deliveryIds)
    .orderBy('seq', 'desc')
    .execute();
}

/** Which attempts a delivery log shows: all, or those that got a 2xx answer, or the others. */
export type AttemptOutcome = 'succeeded' | 'failed';

/**
 * An endpoint's delivery log (the operator CLI, the dashboard): its newest `limit` attempts, newest
 * first, optionally only those of one outcome and of one event kind.
 */
export async function listDeliveryLog(
  db: Db,
  webhookId: string,
  options: { limit: number; outcome?: AttemptOutcome; event?: string },
): Promise<DeliveryLogEntry[]> {
  const { outcome, event } = options;
  return db
    .selectFrom('webhook_attempts')
    .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
    .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
    .innerJoin('webhooks as w', 'w.id', 'webhook_deliveries.webhook_id')
    .selectAll('webhook_attempts')
    .select(['events.id as event_id', 'events.kind as event'])
    .select(
      sql<WebhookDeliveriesTable['status']>`CASE WHEN webhook_deliveries.status = 'pending'
        AND webhook_deliveries.seq < w.dropped_before_seq THEN 'abandoned' ELSE webhook_deliveries.status END`.as(
        'delivery_status',
      ),
    )
    .where('webhook_attempts.webhook_id', '=', webhookId)
    .$if(outcome === 'succeeded', (query) => query.where(succeeded))
    .$if(outcome === 'failed', (query) => query.where((eb) => eb.not(succeeded(eb))))
    .$if(event !== undefined, (query) => query.where('events.kind', '=', event!))
    .orderBy('webhook_attempts.seq', 'desc')
    .limit(options.limit)
    .execute();
}

function succeeded(eb: ExpressionBuilder<Database, 'webhook_attempts'>) {
  return eb.and([
    eb('webhook_attempts.status_code', 'is not', null),
    eb('webhook_attempts.status_code', '>=', 200),
    eb('webhook_attempts.status_code', '<', 300),
  ]);
}

/** For each of the endpoints, how many of its kept attempts since `since` did not get a 2xx answer. */
export async function countFailedAttemptsSince(
  db: Db,
  webhookIds: string[],
  since: Date,
): Promise<Map<string, number>> {
  if (webhookIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('webhook_attempts')
    .select(['webhook_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('webhook_id', 'in', webhookIds)
    .where('attempted_at', '>', since)
    .where((eb) => eb.not(succeeded(eb)))
    .groupBy('webhook_id')
    .execute();
  return new Map(rows.map((row) => [row.webhook_id, Number(row.n)]));
}
