// The calls feature's limits and schedules, named in one place.

/** How long an Idempotency-Key of POST /calls is remembered. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Lanes of the progress worker in one process, each advancing its own calls. */
export const PROGRESS_LANES = 8;

/**
 * How soon after a reconciliation run (a periodic job) began the next one may begin, across the worker
 * processes (ms); a run lasts RECONCILE_RUN_MS unless it ends early, so this bounds the gap after one
 * that did.
 */
export const RECONCILE_EVERY_MS = 1_000;

/** Lanes of one reconciliation run, each settling its own placements and calls. */
export const RECONCILE_LANES = 8;

/** How long one reconciliation run looks for and drains due work before it hands over to the next run (ms). */
export const RECONCILE_RUN_MS = 30_000;

/** Calls of providers that look up in the process one lane advances in one transaction at the most. */
export const PROGRESS_BATCH = 25;

/**
 * After a batch that was not full, how long a progress lane waits for more steps to fall due: this many
 * simulated seconds of the fastest local provider, and at most `maxMs`.
 */
export const PROGRESS_GATHER_WAIT = { simulatedSeconds: 2, maxMs: 50 } as const;

/** The idle progress worker looks for due calls every simulated second, and at least this often (ms). */
export const PROGRESS_IDLE_WAIT_MS = { min: 10 } as const;

/**
 * Pool connections a process keeps from any one org's placement first steps (the statement or
 * transaction that takes the hold, which may wait for the org's balance row holding a connection): an
 * org runs at most DB_POOL_SIZE minus these at once, at least one; its further placements wait their
 * turn in the service.
 */
export const FIRST_STEP_SPARE_CONNECTIONS = 2;

/** How long after a placement's provider deadline recovery may take it over from the process asking (ms). */
export const PLACEMENT_RECOVERY_GRACE_MS = 2_000;

/** How often a request waits-polls for the response of the same Idempotency-Key's request still placing (ms). */
export const IDEMPOTENCY_POLL_MS = 20;

/** How long the worker waits before trying a call or placement again after its provider failed (ms). */
export const PROVIDER_RETRY_MS = 5_000;

/** Retry-After (seconds) answered to a POST /calls refused by the org's concurrency cap. */
export const CONCURRENCY_RETRY_AFTER_S = 5;
