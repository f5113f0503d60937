// The webhook feature's limits and schedules, named in one place. The spec's descriptions state them to
// integrators; a change here is a change of the published behaviour.
import type { EventKind } from '../../generated/events.js';

/** Endpoints one org may register. */
export const MAX_ENDPOINTS_PER_ORG = 20;

/** How long a secret keeps signing after a rotation replaced it. */
export const SECRET_GRACE_MS = 24 * 3_600_000;

/** Replaced secrets that may be in their grace period at once (each delivery carries one v1 per secret). */
export const MAX_SECRETS_IN_GRACE = 4;

/** How long a test send over its concurrency cap is asked to wait, in seconds. */
export const TEST_SEND_RETRY_AFTER_S = 2;
/** Retry-After (seconds) answered with a redelivery over the org's cap of pending ones. */
export const REDELIVERY_RETRY_AFTER_S = 30;

/** Attempts kept in each endpoint's delivery log. */
export const ATTEMPT_LOG_SIZE = 100;

/** How much of a receiver's answer the delivery log keeps, in characters. */
export const RESPONSE_EXCERPT_CHARS = 500;

/** How long every attempt to an endpoint must have failed before it is switched off. */
export const AUTO_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;

/** How long a receiver has to answer. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * The API operations that wait on a receiver besides their own work: a test send, and a deletion's or
 * a switch-off's wait for the sends in flight to end.
 */
const OPERATIONS_WAITING_ON_RECEIVERS = new Set(['testWebhook', 'deleteWebhook', 'updateWebhook']);

/** The dashboard's forms that do the same as those operations. */
const FORMS_WAITING_ON_RECEIVERS = /^\/dashboard\/webhooks\/[^/]+\/(?:test|delete|disable)$/;

/**
 * Whether a request waits on a webhook receiver, so its deadline allows a delivery's time more: the
 * operations above, and the dashboard forms posting the same.
 */
export function waitsOnReceiver(request: { method: string; path: string; operationId: string | undefined }): boolean {
  if (request.operationId !== undefined) return OPERATIONS_WAITING_ON_RECEIVERS.has(request.operationId);
  return request.method === 'POST' && FORMS_WAITING_ON_RECEIVERS.test(request.path);
}

/** The waits after the 1st, 2nd, ... failed attempt; after the last one the delivery is abandoned. */
export const RETRY_DELAYS_MS = [60_000, 300_000, 900_000, 3_600_000, 14_400_000, 43_200_000] as const;

/** How long after a delivery is queued its retries should end, when the receiver's Retry-After allows. */
export const RETRY_WINDOW_MS = 24 * 3_600_000;

/** Attempts a delivery of `kind` gets in all: the first plus one per retry step; a test event gets one. */
export function maxAttempts(kind: EventKind): number {
  return kind === 'webhook.test' ? 1 : RETRY_DELAYS_MS.length + 1;
}

/**
 * When the next attempt is due after `attemptsMade` failed attempts of `kind`, the last failing at
 * `failedAt`, for a delivery queued at `queuedAt`; null when the delivery is to be given up. A
 * receiver's Retry-After delay (ms) may make the wait longer than the schedule's, never shorter, and
 * only as far as still leaves the rest of the schedule inside the 24-hour window.
 */
export function nextAttemptAt(
  kind: EventKind,
  attemptsMade: number,
  failedAt: Date,
  retryAfterMs: number | null,
  queuedAt: Date,
): Date | null {
  if (attemptsMade >= maxAttempts(kind)) return null;
  const stepIndex = Math.max(attemptsMade, 1) - 1;
  const scheduled = failedAt.getTime() + RETRY_DELAYS_MS[stepIndex]!;
  if (retryAfterMs === null) return new Date(scheduled);
  const stepsAfter = RETRY_DELAYS_MS.slice(stepIndex + 1).reduce((sum, delay) => sum + delay, 0);
  const latest = queuedAt.getTime() + RETRY_WINDOW_MS - stepsAfter;
  return new Date(Math.max(scheduled, Math.min(failedAt.getTime() + retryAfterMs, latest)));
}

/** The status of a delivery given up on: a test delivery (one attempt) `failed`, any other `abandoned`. */
export function givenUpStatus(kind: EventKind): 'failed' | 'abandoned' {
  return kind === 'webhook.test' ? 'failed' : 'abandoned';
}

/** Parses a Retry-After value (whole seconds or an HTTP date) into a delay from `now`; null if unusable. */
export function parseRetryAfter(value: string | null, now: Date): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(date - now.getTime(), 0);
}

/**
 * Deliveries one statement of the clean-up after a switch-off or a deletion marks abandoned or deletes:
 * small enough that a batch ends well inside the statement timeout whatever the backlog.
 */
export const ENDPOINT_CLEANUP_BATCH = 1_000;

/** Endpoints one sweep of the clean-up job cleans up after, at the most. */
export const ENDPOINT_CLEANUP_SWEEP = 20;

/** How often the clean-up left unfinished by a process that stopped is completed (ms). */
export const ENDPOINT_CLEANUP_EVERY_MS = 30_000;
