// SQL for the delivery log: one row per attempt, the last 100 kept per endpoint.
import type { Selectable } from 'kysely';
import type { WebhookAttemptsTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';

/** A row of the delivery log. */
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/** A delivery-log line: an attempt with the event it carried. */
export type DeliveryLogEntry = AttemptRow & { event_id: string; event: string };

/** Appends an attempt to the log. */
export async function insertAttempt(
  trx: Db,
  attempt: {
    id: string;
    deliveryId: string;
    webhookId: string;
    attempt: number;
    statusCode: number | null;
    failureKind: string | null;
    excerpt: string | null;
    durationMs: number;
    attemptedAt: Date;
  },
): Promise<void> {
  await trx
    .insertInto('webhook_attempts')
    .values({
      id: attempt.id,
      delivery_id: attempt.deliveryId,
      webhook_id: attempt.webhookId,
      attempt: attempt.attempt,
      status_code: attempt.statusCode,
      failure_kind: attempt.failureKind,
      response_excerpt: attempt.excerpt,
      duration_ms: attempt.durationMs,
      attempted_at: attempt.attemptedAt,
    })
    .execute();
}

/** Deletes all but the newest `keep` attempts of an endpoint; returns how many went. */
export async function pruneAttempts(trx: Db, webhookId: string, keep: number): Promise<number> {
  const result = await trx
    .deleteFrom('webhook_attempts')
    .where('webhook_id', '=', webhookId)
    .where('seq', '<=', (eb) =>
      eb
        .selectFrom('webhook_attempts')
        .select('seq')
        .where('webhook_id', '=', webhookId)
        .orderBy('seq', 'desc')
        .offset(keep)
        .limit(1),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
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
export async function listDeliveryLog(db: Db, webhookId: string, options: { limit: number }): Promise<DeliveryLogEntry[]> {
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
