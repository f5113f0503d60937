// SQL for the delivery log: recording an attempt (db/functions/record_webhook_attempt.sql) and reading
// the kept attempts back.
import { sql, type Selectable } from 'kysely';
import type { WebhookAttemptsTable, WebhookDeliveriesTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';

/** A row of the delivery log. */
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/** A delivery-log line: an attempt with the event it carried. */
export type DeliveryLogEntry = AttemptRow & { event_id: string; event: string };

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

/**
 * Records an attempt in one round trip: ends the lease with `state`, appends the attempt to the log
 * (pruned to its size) and updates the endpoint's health. Nothing is written when the endpoint is gone
 * or the lease is no longer the caller's. Database errors propagate.
 */
export async function recordAttempt(
  db: Db,
  lease: Lease,
  state: DeliveryState,
  attempt: AttemptToLog,
): Promise<RecordOutcome> {
  const args = sql.join([
    sql`${lease.deliveryId}::uuid`,
    sql`${lease.owner}::text`,
    sql`${lease.expiresAt}::timestamptz`,
    sql`${state.status}::text`,
    sql`${state.attemptCount}::integer`,
    sql`${state.nextAttemptAt}::timestamptz`,
    sql`${attempt.webhookId}::uuid`,
    sql`${attempt.id}::uuid`,
    sql`${attempt.statusCode}::integer`,
    sql`${attempt.failureKind}::text`,
    sql`${attempt.excerpt}::text`,
    sql`${attempt.durationMs}::integer`,
    sql`${attempt.attemptedAt}::timestamptz`,
    sql`${attempt.affectsHealth}::boolean`,
    sql`${attempt.logSize}::integer`,
    sql`make_interval(secs => ${attempt.disableAfterMs / 1000})`,
  ]);
  const { rows } = await sql<{
    outcome: RecordOutcome['outcome'];
    switched_off: boolean;
    failing_since: Date | null;
    abandoned: number;
  }>`SELECT * FROM record_webhook_attempt(${args})`.execute(db);
  const row = rows[0]!;
  if (row.outcome !== 'recorded') return { outcome: row.outcome };
  return {
    outcome: 'recorded',
    switchedOff: row.switched_off,
    failingSince: row.failing_since,
    abandoned: row.abandoned,
  };
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

/** An endpoint's delivery log (for the operator CLI): its newest `limit` attempts, newest first. */
export async function listDeliveryLog(
  db: Db,
  webhookId: string,
  options: { limit: number },
): Promise<DeliveryLogEntry[]> {
  return db
    .selectFrom('webhook_attempts')
    .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
    .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
    .selectAll('webhook_attempts')
    .select(['events.id as event_id', 'events.kind as event'])
    .where('webhook_attempts.webhook_id', '=', webhookId)
    .orderBy('webhook_attempts.seq', 'desc')
    .limit(options.limit)
    .execute();
}
