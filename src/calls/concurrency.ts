// The org-wide concurrency cap, a plan setting: how many calls an org may have in progress at once,
// whoever starts them. Every path that starts a call under a cap asks here inside the transaction that
// stores its placement (a placement stored without a transaction is one with no cap), so the answer and
// the placement commit together under the org's row lock, across processes. Test keys work in the org's test twin (same plan, own calls), so each mode has its own count.
import type { Db } from '../database/connect.js';
import { DomainError } from '../errors.js';
import { countCallsInProgress, lockOrgCallCap } from './concurrency-queries.js';
import { CONCURRENCY_RETRY_AFTER_S } from './policy.js';

/** The org's cap and its calls in progress, as counted under the org's row lock. */
export interface CallSlots {
  cap: number;
  inProgress: number;
}

/**
 * Locks the org's row until `trx` ends and returns its cap with its calls in progress, or null when its
 * plan sets no cap. A placement stored in `trx` after this is counted by every later caller.
 */
export async function lockCallSlots(trx: Db, orgId: string): Promise<CallSlots | null> {
  const org = await lockOrgCallCap(trx, orgId);
  if (!org) throw new Error(`org ${orgId} does not exist`);
  if (org.cap === null) return null;
  return { cap: org.cap, inProgress: await countCallsInProgress(trx, orgId) };
}

/**
 * Decides whether the org may start one more call, given its plan's cap as read in this transaction:
 * returns at once when the plan sets none (nothing needs counting; the hold's balance movement locks
 * the org's row), else locks the org's row until `trx` ends, counts under that lock (the cap read again
 * with it) and returns when there is room. Throws DomainError too_many_requests with Retry-After when
 * the cap is reached. A cap given to an org's plan binds the placements that read the plan after that
 * change commits: those already past this check with no cap are not counted against it until they
 * commit, so the org may start that many calls over the new cap, once.
 */
export async function refuseOverCallCap(trx: Db, orgId: string, cap: number | null): Promise<void> {
  if (cap === null) return;
  const slots = await lockCallSlots(trx, orgId);
  if (slots === null || slots.inProgress < slots.cap) return;
  throw new DomainError(
    'too_many_requests',
    `The organisation's plan allows at most ${slots.cap} ${slots.cap === 1 ? 'call' : 'calls'} in progress at once, and ${slots.inProgress} ${slots.inProgress === 1 ? 'is' : 'are'} in progress; retry in ${CONCURRENCY_RETRY_AFTER_S} seconds, once one has ended.`,
    { headers: { 'Retry-After': String(CONCURRENCY_RETRY_AFTER_S) } },
  );
}
