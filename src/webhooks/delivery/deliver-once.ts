// One attempt at one claimed delivery, and the only code that sends a webhook: claim (done before, by
// the worker in batches or by the test send for its own delivery) → build → validate → sign → send →
// record. The worker's deliveries, redeliveries (queued for the worker) and test sends all come here.
import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../../app-deps.js';
import * as attempts from '../attempt-queries.js';
import * as deliveries from '../delivery-queries.js';
import type { ClaimedDelivery } from '../delivery-queries.js';
import {
  ATTEMPT_LOG_SIZE,
  AUTO_DISABLE_AFTER_MS,
  DELIVERY_TIMEOUT_MS,
  givenUpStatus,
  nextAttemptAt,
  parseRetryAfter,
} from '../policy.js';
import { buildDelivery, isEventKind } from './envelope.js';
import { classifyError, describeError, type FailureKind } from './failure.js';
import { EndpointDeletedError } from './in-flight.js';
import { excerptOf, postDelivery } from './send.js';
import { isDatabaseUnavailable } from '../../database/faults.js';

/** What deliverOnce needs: the database, the clock, the logger, the metrics and the delivery runtime. */
export type DeliveryDeps = Pick<AppDeps, 'db' | 'clock' | 'logger' | 'delivery' | 'metrics'>;

/** The outcome of one attempt, as the delivery log records it. */
export interface AttemptResult {
  /** The x-svc-delivery header value. */
  id: string;
  attemptedAt: Date;
  statusCode: number | null;
  failureKind: FailureKind | null;
  excerpt: string | null;
  durationMs: number;
  /** A Retry-After delay the receiver asked for with a 429 or 503, in ms. */
  retryAfterMs: number | null;
}

/** What became of a claimed delivery. */
export type DeliveryOutcome =
  /** An attempt was made; `recorded` says whether it was written (see attempts.recordAttempts). */
  | { kind: 'attempted'; result: AttemptResult; recorded: 'recorded' | 'gone' | 'lease_lost' }
  /** The send was stopped (the endpoint was switched off or is being deleted, or `stop` fired): nothing recorded, lease given back. */
  | { kind: 'aborted'; endpointDeleted: boolean };

/** Time kept after a send's own deadline to record it before the lease lapses. */
const RECORD_MARGIN_MS = 2_000;

/** A claim with less time than this left for sending is given back unused. */
const MIN_SEND_BUDGET_MS = 1_000;

async function attempt(deps: DeliveryDeps, claimed: ClaimedDelivery, signal: AbortSignal): Promise<AttemptResult> {
  const id = randomUUID();
  const attemptedAt = deps.clock.now();
  const base = { id, attemptedAt, statusCode: null, retryAfterMs: null };
  const built = buildDelivery(claimed.event, {
    id,
    timestampMs: attemptedAt.getTime(),
    secrets: claimed.endpoint.secrets,
  });
  if (!built.ok) {
    deps.logger.error(
      { eventId: claimed.event.id, kind: claimed.event.kind, problem: built.problem },
      'webhook delivery breaks the contract; not sent',
    );
    return { ...base, failureKind: 'invalid_payload', excerpt: excerptOf(built.problem), durationMs: 0 };
  }
  const started = performance.now();
  try {
    const answer = await postDelivery(
      deps.delivery.dispatcher,
      claimed.endpoint.url,
      built.request.headers,
      built.request.body,
      signal,
    );
    const ok = answer.status >= 200 && answer.status < 300;
    const wantsLater = answer.status === 429 || answer.status === 503;
    return {
      ...base,
      statusCode: answer.status,
      failureKind: ok ? null : 'http_status',
      excerpt: answer.excerpt,
      durationMs: Math.round(performance.now() - started),
      retryAfterMs: wantsLater ? parseRetryAfter(answer.retryAfter, attemptedAt) : null,
    };
  } catch (error) {
    return {
      ...base,
      failureKind: classifyError(error),
      excerpt: excerptOf(describeError(error)),
      durationMs: Math.round(performance.now() - started),
    };
  }
}

/** The delivery's state after an attempt: done, due again later, or given up. */
function stateAfter(claimed: ClaimedDelivery, result: AttemptResult): attempts.DeliveryState {
  const attemptCount = claimed.attemptCount + 1;
  const kind = isEventKind(claimed.event.kind) ? claimed.event.kind : 'webhook.test';
  if (result.failureKind === null) return { status: 'succeeded', attemptCount, nextAttemptAt: null };
  const next =
    result.failureKind === 'invalid_payload'
      ? null
      : nextAttemptAt(kind, attemptCount, result.attemptedAt, result.retryAfterMs, claimed.createdAt);
  return next
    ? { status: 'pending', attemptCount, nextAttemptAt: next }
    : { status: givenUpStatus(kind), attemptCount, nextAttemptAt: null };
}

/**
 * Makes one attempt at a claimed delivery and records it under the claim's lease (the claim
 * found the endpoint on). A send stopped by `stop`, by the endpoint's deletion or by its switch-off (a
 * test event excepted) records nothing and gives the lease back. Never sends once the lease is too short for a whole attempt. Database
 * errors while recording propagate (the lease then lapses and the delivery is tried again).
 */
export async function deliverOnce(
  deps: DeliveryDeps,
  claimed: ClaimedDelivery,
  stop?: AbortSignal,
): Promise<DeliveryOutcome> {
  const lease = { deliveryId: claimed.id, owner: claimed.lease.owner, expiresAt: claimed.lease.expiresAt };
  // The whole send must end before the lease lapses, with time left to record it.
  const sendBudgetMs = Math.min(
    DELIVERY_TIMEOUT_MS,
    claimed.lease.expiresAt.getTime() - deps.clock.now().getTime() - RECORD_MARGIN_MS,
  );
  const send = deps.delivery.inFlight.track(claimed.webhookId, {
    deadlineMs: Math.max(sendBudgetMs, 0),
    stop,
    // A test event is sent even to a switched-off endpoint: only a deletion stops it.
    survivesSwitchOff: claimed.event.kind === 'webhook.test',
  });
  try {
    if (sendBudgetMs < MIN_SEND_BUDGET_MS || send.stopped) {
      await deliveries.releaseLease(deps.db, lease).catch(() => undefined);
      return { kind: 'aborted', endpointDeleted: send.signal.reason instanceof EndpointDeletedError };
    }
    const result = await attempt(deps, claimed, send.signal);
    if (send.stopped) {
      await deliveries.releaseLease(deps.db, lease).catch(() => undefined);
      return { kind: 'aborted', endpointDeleted: send.signal.reason instanceof EndpointDeletedError };
    }
    const state = stateAfter(claimed, result);
    const recorded = await recordWithRetries(deps, claimed, () =>
      deps.delivery.recorder.record({
        lease,
        state,
        attempt: {
          id: result.id,
          webhookId: claimed.webhookId,
          statusCode: result.statusCode,
          failureKind: result.failureKind,
          excerpt: result.excerpt,
          durationMs: result.durationMs,
          attemptedAt: result.attemptedAt,
          // A delivery we refused to send says nothing about the endpoint's health.
          affectsHealth: result.failureKind !== 'invalid_payload',
          logSize: ATTEMPT_LOG_SIZE,
          disableAfterMs: AUTO_DISABLE_AFTER_MS,
        },
      }),
    );
    report(deps, claimed, result, state, recorded);
    return { kind: 'attempted', result, recorded: recorded.outcome };
  } finally {
    send.end();
  }
}

/** Waits between tries to record an attempt when the database connection failed. */
const RECORD_RETRY_DELAYS_MS = [100, 400, 1_000];

/**
 * Records an attempt, trying again on a new connection when the database could not be reached, as long
 * as the lease lasts: the receiver has the request, and a lapsed lease would have it sent twice.
 * Rethrows the last failure, or any failure that is not the database's.
 */
async function recordWithRetries<T>(
  deps: DeliveryDeps,
  claimed: ClaimedDelivery,
  record: () => Promise<T>,
): Promise<T> {
  for (let tried = 0; ; tried += 1) {
    try {
      return await record();
    } catch (error) {
      const wait = RECORD_RETRY_DELAYS_MS[tried];
      const leaseLeft = claimed.lease.expiresAt.getTime() - deps.clock.now().getTime();
      if (wait === undefined || !isDatabaseUnavailable(error) || leaseLeft <= wait) throw error;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function report(
  deps: DeliveryDeps,
  claimed: ClaimedDelivery,
  result: AttemptResult,
  state: attempts.DeliveryState,
  recorded: attempts.RecordOutcome,
): void {
  const { logger, metrics } = deps;
  const { event } = claimed;
  const context = {
    deliveryId: claimed.id,
    webhookId: claimed.webhookId,
    eventId: event.id,
    event: event.kind,
    ...(event.traceparent ? { traceparent: event.traceparent } : {}),
  };
  if (recorded.outcome === 'lease_lost') {
    logger.warn(context, 'webhook delivery was taken over by another process; this attempt was not recorded');
    return;
  }
  if (recorded.outcome !== 'recorded') return;
  metrics.webhookAttempts.inc({ outcome: result.failureKind ?? 'success' });
  // How long events wait for their first attempt (test sends are made on request, so they say nothing).
  if (claimed.attemptCount === 0 && event.kind !== 'webhook.test') {
    metrics.eventToFirstAttempt.observe((result.attemptedAt.getTime() - claimed.createdAt.getTime()) / 1000);
  }
  if (recorded.switchedOff) {
    logger.warn(
      { webhookId: claimed.webhookId, failingSince: recorded.failingSince, dropped: recorded.abandoned },
      'webhook endpoint switched off after 5 days of failures',
    );
  }
  if (state.status === 'abandoned') {
    metrics.webhookDeliveriesAbandoned.inc();
    logger.warn(
      { ...context, attempts: state.attemptCount, failureKind: result.failureKind, status: result.statusCode },
      'webhook delivery abandoned after its last attempt failed',
    );
  } else if (result.failureKind === null) {
    // One line per delivery would drown a busy service's log, so this one is for debugging.
    logger.debug(
      { ...context, attempt: state.attemptCount, status: result.statusCode, durationMs: result.durationMs },
      'webhook delivered',
    );
  } else if (result.failureKind !== 'invalid_payload') {
    logger.info(
      { ...context, attempt: state.attemptCount, failureKind: result.failureKind, status: result.statusCode },
      'webhook attempt failed',
    );
  }
}
