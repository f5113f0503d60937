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

/** The waits after the 1st, 2nd, ... failed attempt; after the last one the delivery is abandoned. */
export const RETRY_DELAYS_MS = [60_000, 300_000, 900_000, 3_600_000, 14_400_000, 43_200_000] as const;

/** The longest Retry-After honoured; a longer one falls back to the schedule. */
export const MAX_RETRY_AFTER_MS = 12 * 3_600_000;

/** Attempts a delivery of `kind` gets in all: the first plus one per retry step; a test event gets one. */
export function maxAttempts(kind: EventKind): number {
  return kind === 'webhook.test' ? 1 : RETRY_DELAYS_MS.length + 1;
}

/**
 * When the next attempt is due after `attemptsMade` failed attempts of `kind`, the last failing at
 * `failedAt`, or null when the delivery is to be given up. A receiver's Retry-After delay (ms) may make
 * the wait longer than the schedule's, up to 12 hours, never shorter.
 */
export function nextAttemptAt(
  kind: EventKind,
  attemptsMade: number,
  failedAt: Date,
  retryAfterMs: number | null,
): Date | null {
  if (attemptsMade >= maxAttempts(kind)) return null;
  const step = RETRY_DELAYS_MS[Math.max(attemptsMade, 1) - 1]!;
  const delay = retryAfterMs !== null && retryAfterMs <= MAX_RETRY_AFTER_MS ? Math.max(retryAfterMs, step) : step;
  return new Date(failedAt.getTime() + delay);
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
