// The calls feature's limits and schedules, named in one place.

/** How long an Idempotency-Key of POST /calls is remembered. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Calls one process advances at once. */
export const PROGRESS_LANES = 4;

/** The idle progress worker looks for due calls every simulated second, and at least this often (ms). */
export const PROGRESS_IDLE_WAIT_MS = { min: 10 } as const;
