// What an attempt changes in the database: the delivery log (last 100 per endpoint), the endpoint's
// health (last status, failure streak, automatic switch-off after 5 days), and the delivery's state.
import type { Logger } from 'pino';
import type { Db } from '../../database/connect.js';
import * as attempts from '../attempt-queries.js';
import * as deliveries from '../delivery-queries.js';
import * as webhooks from '../queries.js';
import type { AttemptResult } from './attempt.js';
import type { StoredEvent } from './envelope.js';
import { nextAttemptAt } from './retry-policy.js';

/** Attempts kept in each endpoint's delivery log. */
const ATTEMPT_LOG_SIZE = 100;

/** How long every attempt to an endpoint must have failed before it is switched off. */
const AUTO_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/** The lease was lost: another worker took the delivery over; nothing was recorded. */
export class LeaseLostError extends Error {}

/** The delivery-log line for an attempt, with the log's rules. */
function logLine(webhookId: string, deliveryId: string, attempt: number, result: AttemptResult): attempts.AttemptToLog {
  return {
    id: result.id,
    deliveryId,
    webhookId,
    attempt,
    statusCode: result.statusCode,
    failureKind: result.failureKind,
    excerpt: result.excerpt,
    durationMs: result.durationMs,
    attemptedAt: result.attemptedAt,
    // A payload we refused to send says nothing about the endpoint's health.
    affectsHealth: result.failureKind !== 'invalid_payload',
    logSize: ATTEMPT_LOG_SIZE,
    disableAfterMs: AUTO_DISABLE_AFTER_MS,
  };
}

function reportSwitchOff(logger: Logger, webhookId: string, effect: attempts.LogEffect): void {
  if (effect.switchedOff) {
    logger.warn(
      { webhookId, failingSince: effect.failingSince, dropped: effect.abandoned },
      'webhook endpoint switched off after 5 days of failures',
    );
  }
}

/** The delivery's state after an attempt: done, due again later, or abandoned. */
function stateAfter(attemptsMade: number, result: AttemptResult) {
  if (result.failureKind === null)
    return { status: 'succeeded' as const, attemptCount: attemptsMade, nextAttemptAt: null };
  const next =
    result.failureKind === 'invalid_payload'
      ? null
      : nextAttemptAt(attemptsMade, result.attemptedAt, result.retryAfterMs);
  return {
    status: next ? ('pending' as const) : ('abandoned' as const),
    attemptCount: attemptsMade,
    nextAttemptAt: next,
  };
}

/**
 * Records a worker's attempt on a leased delivery in one transaction (one round trip). Throws
 * LeaseLostError (nothing recorded) when the lease is no longer held; database errors propagate.
 */
export async function recordLeasedAttempt(
  db: Db,
  delivery: deliveries.LeasedDelivery,
  result: AttemptResult,
  logger: Logger,
): Promise<void> {
  const attempt = delivery.attemptCount + 1;
  const recorded = await attempts.recordAttemptOnLease(
    db,
    delivery,
    stateAfter(attempt, result),
    logLine(delivery.webhookId, delivery.id, attempt, result),
  );
  if (recorded.outcome === 'lease_lost')
    throw new LeaseLostError(`delivery ${delivery.id} was taken over by another worker`);
  if (recorded.outcome === 'recorded') reportSwitchOff(logger, delivery.webhookId, recorded);
  if (result.failureKind !== null && result.failureKind !== 'invalid_payload') {
    logger.info(
      { deliveryId: delivery.id, attempt, failureKind: result.failureKind, status: result.statusCode },
      'webhook attempt failed',
    );
  }
}

/** Abandons a leased delivery without an attempt (its endpoint is switched off). */
export async function abandonLeasedDelivery(db: Db, delivery: deliveries.LeasedDelivery): Promise<void> {
  await deliveries.settleDelivery(db, delivery, {
    status: 'abandoned',
    attemptCount: delivery.attemptCount,
    nextAttemptAt: null,
  });
}

/**
 * Records a one-off test delivery (event, delivery and its single attempt) in one transaction and
 * returns the delivery id. Undefined when the endpoint no longer exists.
 */
export async function recordTestDelivery(
  db: Db,
  target: { orgId: string; webhookId: string },
  event: StoredEvent,
  result: AttemptResult,
  logger: Logger,
): Promise<string | undefined> {
  return db.transaction().execute(async (trx) => {
    if (!(await webhooks.lockWebhookForRecording(trx, target.webhookId))) return undefined;
    await deliveries.insertEventRow(trx, { ...event, orgId: target.orgId });
    const deliveryId = await deliveries.insertDelivery(trx, {
      webhookId: target.webhookId,
      orgId: target.orgId,
      eventId: event.id,
      status: result.failureKind === null ? 'succeeded' : 'failed',
      attemptCount: 1,
      nextAttemptAt: null,
      createdAt: result.attemptedAt,
    });
    reportSwitchOff(
      logger,
      target.webhookId,
      await attempts.logAttempt(trx, logLine(target.webhookId, deliveryId, 1, result)),
    );
    return deliveryId;
  });
}
