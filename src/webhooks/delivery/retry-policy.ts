// The retry schedule: after the n-th failed attempt the next is due schedule[n-1] later; after the
// 7th failure the delivery is abandoned. Retry-After on 429/503 replaces the step when it is sane.
const RETRY_DELAYS_MS = [60_000, 300_000, 900_000, 3_600_000, 14_400_000, 43_200_000] as const;

/** Attempts a delivery gets in all: the first plus one per retry step. */
const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** The longest Retry-After honoured; a longer one falls back to the schedule. */
const MAX_RETRY_AFTER_MS = 12 * 3_600_000;

/**
 * When the next attempt is due after `attemptsMade` attempts, the last failing at `failedAt`, or null
 * when the delivery is to be abandoned. A Retry-After delay (ms) within bounds wins over the schedule.
 */
export function nextAttemptAt(attemptsMade: number, failedAt: Date, retryAfterMs: number | null): Date | null {
  if (attemptsMade >= MAX_ATTEMPTS) return null;
  const step = RETRY_DELAYS_MS[Math.max(attemptsMade, 1) - 1]!;
  const delay = retryAfterMs !== null && retryAfterMs <= MAX_RETRY_AFTER_MS ? Math.max(retryAfterMs, 1_000) : step;
  return new Date(failedAt.getTime() + delay);
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
