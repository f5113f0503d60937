// The campaign dispatcher's limits and timings.

/** Contacts one pass claims at the most (each then placed by one of the lanes). */
export const CLAIM_BATCH = 200;

/** Claimed contacts whose checks, holds and placements one transaction makes (under one org row lock). */
export const PLACEMENT_BATCH = 50;

/** Placements one dispatcher asks its provider for (and settles) at once. */
export const PLACEMENT_LANES = 16;

/** How long a claim holds a contact before another dispatcher may take it (its holder died). */
export const CLAIM_LEASE_MS = 30_000;

/** While calls are in progress or claimable work remains, how soon the next pass runs. */
export const BUSY_PASS_MS = 250;

/** How long one dispatch job keeps running passes before it hands over to its successor. */
export const JOB_BUDGET_MS = 5_000;

/**
 * After placing stopped early, how long before the next pass: the org's cap on calls in progress frees
 * up as calls end; a campaign paused on credits still settles its calls; a fault outside the campaign
 * (no plan, the agent's provider not configured) is not retried often.
 */
export const HALT_WAIT_MS = { call_cap: 1_000, insufficient_credits: 250, cannot_place: 30_000 } as const;

/** Campaigns one worker process dispatches at once. */
export const DISPATCH_JOBS_AT_ONCE = 8;

/** A job sleeps until its next pass when that is this near; further off, it queues a successor. */
export const SLEEP_WITHIN_JOB_MS = 1_000;
