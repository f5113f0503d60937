// The reconciliation job: once every RECONCILE_EVERY_MS across the worker processes (a periodic job of
// the job engine), settles placements whose provider never answered (or whose process died before
// recording them), and brings calls of providers over the network (Vapi) up to date when they fall due:
// a call quiet for PROVIDER_RECONCILE_AFTER_S is looked up, and one connected past its deadline is hung
// up. Each call is claimed with a lease (one statement, SKIP LOCKED), looked up outside any transaction
// at its provider's rate, then changed; a run that dies leaves its calls to the next run once the lease
// lapses. Calls of providers that look up in the process are the call-progress worker's.
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppDeps } from '../app-deps.js';
import { claimDueCall, type CallRow } from './queries.js';
import { claimDuePlacement, schedulePlacementRecovery } from './placement-queries.js';
import { applyLookup, lookUpCall, recoverPlacement, type CallLookup } from './reconcile.js';
import { isDatabaseUnavailable } from '../database/faults.js';
import { LookupGate } from './lookup-gate.js';
import { hangUpDue, localProviders, putOff, retryCallAt, stepTimes, type Applied } from './progress-steps.js';
import { RECONCILE_EVERY_MS, RECONCILE_LANES, RECONCILE_RUN_MS } from './policy.js';

/**
 * Brings a claimed call up to date: looks it up at its provider's rate, then applies what was found in
 * a transaction. A provider that is not configured here, a failed lookup or a failed change puts the
 * call off to `retryAt`. Returns the call's lookup and how it then stands, or null when not looked up.
 */
async function reconcileClaimed(
  deps: AppDeps,
  gate: LookupGate,
  call: CallRow,
  retryAt: Date,
): Promise<Applied | null> {
  const provider = deps.providers.get(call.provider);
  if (!provider) {
    deps.logger.warn(
      { provider: call.provider, callId: call.id },
      'a call in flight uses a provider this process is not configured for',
    );
    await retryCallAt(deps, call, retryAt);
    return null;
  }
  await gate.take(provider);
  let lookup: CallLookup;
  try {
    lookup = await lookUpCall(deps, provider, call);
  } catch (error) {
    await putOff(deps, call, error, retryAt);
    return null;
  }
  try {
    const after = await deps.db.transaction().execute((trx) => applyLookup(deps, trx, provider, lookup, null));
    return { provider, lookup, after };
  } catch (error) {
    // While the database is down this fails too, and ends the step.
    await putOff(deps, call, error, retryAt);
    return { provider, lookup, after: null };
  }
}

/** Recovers the most overdue placement, if one is due; returns whether one was. Throws on database errors. */
async function recoverOnePlacement(deps: AppDeps, gate: LookupGate, leaseUntil: Date, retryAt: Date) {
  const placement = await claimDuePlacement(deps.db, deps.clock.now(), leaseUntil);
  if (!placement) return false;
  const provider = deps.providers.get(placement.provider);
  try {
    if (!provider) throw new Error(`provider ${placement.provider} is not configured in this process`);
    await gate.take(provider);
    const step = await recoverPlacement(deps, provider, placement);
    if (step && step.from !== step.to) deps.metrics.callStatusChanges.inc(step);
  } catch (error) {
    deps.logger.warn(
      { provider: placement.provider, callId: placement.id, err: error },
      'a placement could not be settled; tried again later',
    );
    await schedulePlacementRecovery(deps.db, placement.id, retryAt);
  }
  return true;
}

/**
 * Does one piece of due work: settles the most overdue placement, or else brings the most overdue due
 * call of a provider over the network up to date (claimed with a lease, looked up at the provider's
 * rate, then changed, and hung up when found past its deadline). Placements go first: they are few,
 * and each holds credits and an Idempotency-Key. Returns whether there was work; counts status changes
 * in the metrics. A provider that is not configured here, or fails, is tried again later. Throws on
 * database errors.
 */
export async function reconcileDue(deps: AppDeps, gate: LookupGate): Promise<boolean> {
  const now = deps.clock.now();
  const { leaseUntil, retryAt } = stepTimes(deps, now);
  if (await recoverOnePlacement(deps, gate, leaseUntil, retryAt)) return true;
  const call = await claimDueCall(deps.db, {
    now,
    leaseUntil,
    localProviders: localProviders(deps).map((provider) => provider.name),
  });
  if (!call) return false;
  const applied = await reconcileClaimed(deps, gate, call, retryAt);
  if (applied) await hangUpDue(deps, [applied], retryAt);
  return true;
}

/**
 * Schedules reconciliation on the job engine (the worker role): one run at a time across the worker
 * processes, so each provider's lookup rate holds for the whole deployment. A run lasts up to
 * RECONCILE_RUN_MS: it looks for due work every CALL_POLL_INTERVAL_MS while there is none, and drains
 * what it finds in RECONCILE_LANES lanes. It ends early when the engine stops, or at its first database
 * failure, logged once (the engine itself logs an outage, during which no run starts). The next run
 * begins as soon as the engine fetches it. Resolves once the job is registered; never rejects.
 */
export function scheduleReconciliation(deps: AppDeps): Promise<void> {
  const gate = new LookupGate(deps.metrics);
  return deps.jobs.every('calls.reconcile', RECONCILE_EVERY_MS, async (signal) => {
    const until = Date.now() + RECONCILE_RUN_MS;
    let failed = false;
    const going = () => !signal.aborted && !failed && Date.now() < until;
    // One piece of due work; false when none is left, or once a step of this run failed.
    const step = async () => {
      if (failed) return false;
      try {
        return await reconcileDue(deps, gate);
      } catch (error) {
        if (!failed) {
          const level = isDatabaseUnavailable(error) ? 'warn' : 'error';
          deps.logger[level]({ err: error }, 'a reconciliation run ended early; the next run carries on');
        }
        failed = true;
        return false;
      }
    };
    const drain = async () => {
      while (going() && (await step()));
    };
    while (going()) {
      if (await step()) await Promise.all(Array.from({ length: RECONCILE_LANES }, drain));
      else if (going()) await sleep(deps.config.callPollIntervalMs, undefined, { signal }).catch(() => undefined);
    }
  });
}
