// SQL for the delivery log: one row per attempt, the last 100 kept per endpoint.
import { sql, type Selectable } from 'kysely';
import type { WebhookAttemptsTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';

/** A row of the delivery log. */
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/** A delivery-log line: an attempt with the event it carried. */
export type DeliveryLogEntry = AttemptRow & { event_id: string; event: string };

/** An attempt to log, with the rules the log keeps. */
export interface AttemptToLog {
  id: string;
  deliveryId: string;
  webhookId: string;
  attempt: number;
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

/** What logging an attempt did to its endpoint. */
export interface LogEffect {
  /** The endpoint was switched off by this attempt. */
  switchedOff: boolean;
  /** When the endpoint's current failure streak began (null when it is healthy). */
  failingSince: Date | null;
  /** Pending deliveries abandoned by the switch-off. */
  abandoned: number;
}

/** What recording a leased attempt came to: recorded, or nothing written because the endpoint or lease was gone. */
export type RecordOutcome = ({ outcome: 'recorded' } & LogEffect) | { outcome: 'gone' | 'lease_lost' };

/** The arguments both functions of migration 007 end with: the attempt's result and the log's rules. */
function resultArguments(attempt: AttemptToLog) {
  return [
    sql`${attempt.statusCode}::integer`,
    sql`${attempt.failureKind}::text`,
    sql`${attempt.excerpt}::text`,
    sql`${attempt.durationMs}::integer`,
    sql`${attempt.attemptedAt}::timestamptz`,
    sql`${attempt.affectsHealth}::boolean`,
    sql`${attempt.logSize}::integer`,
    sql`make_interval(secs => ${attempt.disableAfterMs / 1000})`,
  ];
}

interface EffectRow {
  switched_off: boolean;
  failing_since: Date | null;
  abandoned: number;
}

const effectOf = (row: EffectRow): LogEffect => ({
  switchedOff: row.switched_off,
  failingSince: row.failing_since,
  abandoned: row.abandoned,
});

/**
 * Inside a transaction holding the endpoint row's lock: appends the attempt to the log, prunes it,
 * and updates the endpoint's health (migration 007's log_webhook_attempt).
 */
export async function logAttempt(trx: Db, attempt: AttemptToLog): Promise<LogEffect> {
  const args = sql.join([
    sql`${attempt.webhookId}::uuid`,
    sql`${attempt.deliveryId}::uuid`,
    sql`${attempt.id}::uuid`,
    sql`${attempt.attempt}::integer`,
    ...resultArguments(attempt),
  ]);
  const { rows } = await sql<EffectRow>`SELECT * FROM log_webhook_attempt(${args})`.execute(trx);
  return effectOf(rows[0]!);
}

/**
 * Records a worker's attempt on a leased delivery in one round trip (migration 007's
 * record_webhook_attempt): locks the endpoint, ends the lease with `state`, logs the attempt. Nothing
 * is written when the endpoint is gone or the lease is no longer the caller's.
 */
export async function recordAttemptOnLease(
  db: Db,
  lease: { leaseExpiresAt: Date },
  state: { status: string; attemptCount: number; nextAttemptAt: Date | null },
  attempt: AttemptToLog,
): Promise<RecordOutcome> {
  const args = sql.join([
    sql`${attempt.deliveryId}::uuid`,
    sql`${lease.leaseExpiresAt}::timestamptz`,
    sql`${state.status}::text`,
    sql`${state.attemptCount}::integer`,
    sql`${state.nextAttemptAt}::timestamptz`,
    sql`${attempt.webhookId}::uuid`,
    sql`${attempt.id}::uuid`,
    ...resultArguments(attempt),
  ]);
  const { rows } = await sql<
    EffectRow & { outcome: RecordOutcome['outcome'] }
  >`SELECT * FROM record_webhook_attempt(${args})`.execute(db);
  const row = rows[0]!;
  return row.outcome === 'recorded' ? { outcome: 'recorded', ...effectOf(row) } : { outcome: row.outcome };
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
