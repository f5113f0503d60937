// The orgs feature's defaults and bounds, named in one place.

/** Requests per minute for an org without an active plan: the product's default. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 120;

/**
 * How far ahead an instance may take slots of a busy org's rate limit: at most what the limit allows in
 * this many ms, handed out within this many ms. Below 240 requests a minute that is no slot at all.
 */
export const RATE_LIMIT_RESERVATION_MS = 250;

/** The provider's default caller id, used when neither the agent nor the org has one. */
export const DEFAULT_FROM_E164 = '+918000000000';

/** A new agent's settings unless the operator gives others. */
export const DEFAULT_AGENT = { language: 'en-IN', maxDurationSec: 600, ratePaisePerMinute: 200 } as const;

/** The longest agent name, in characters: the spec's `Agent.name` maxLength. */
export const AGENT_NAME_MAX = 200;

/** The highest per-minute rate an agent may have, in paise: the spec's int32 bound. */
export const AGENT_RATE_MAX = 2_147_483_647;

/** The range an agent's maximum call duration may be set in, in seconds. */
export const AGENT_MAX_DURATION_BOUNDS = { min: 15, max: 3600 } as const;

/** The plan a new org gets unless the operator names another (or none). */
export const DEFAULT_PLAN_ID = 'starter';

/**
 * A new org's low-balance threshold, in paise (₹100): room for five calls of an agent with the default
 * settings (600 s at 200 paise a minute holds 2,000 paise). Migration 031 sets it as the column's default.
 */
export const DEFAULT_LOW_BALANCE_THRESHOLD_PAISE = 10_000;

/** What a low-balance threshold may be, as told to an operator who gives another value. */
export const LOW_BALANCE_THRESHOLD_RULE = `--low-balance-threshold must be a whole number of paise from 0 (off) to ${Number.MAX_SAFE_INTEGER}`;
