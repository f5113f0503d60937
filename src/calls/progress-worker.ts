// The call-progress worker: claims calls whose next step is due, and placements whose provider never
// answered, each with a lease (one statement, SKIP LOCKED, so several processes share one database and
// a process that dies leaves its work to another), and brings each up to date with its provider outside
// any transaction. All progress lives in the database, so a restarted process picks up every call in
// flight where it stands, and recovers placements a killed process left between its two transactions.
import type { AppDeps } from '../app-deps.js';
import type { BackgroundWorker } from '../background-worker.js';
import { claimDueCalls, lockCall, type CallRow } from './queries.js';
import { claimDuePlacement, schedulePlacementRecovery } from './placement-queries.js';
import {
  applyLookup,
  hangUpIfDue,
  lookUpCall,
  recoverPlacement,
  type CallLookup,
  type StatusStep,
} from './reconcile.js';
import { withWritesBatched } from './batched-writes.js';
import type { VoiceProvider } from './provider/types.js';
import { scheduleCall } from './lifecycle.js';
import { OutageTracker } from '../database/outage.js';
import { PROGRESS_BATCH, PROGRESS_IDLE_WAIT_MS, PROGRESS_LANES as LANES, PROVIDER_RETRY_MS } from './policy.js';
import { LookupGate } from './lookup-gate.js';

/** Moves a claimed call's next step to `at` (it stays leased until then). */
async function retryCallAt(deps: AppDeps, call: { id: string; org_id: string }, at: Date): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const locked = await lockCall(trx, call.org_id, call.id);
    if (locked && locked.next_step_at !== null) await scheduleCall(trx, locked, at);
  });
}

/** A claimed call's lookup and the provider it came from. */
interface LookedUp {
  provider: VoiceProvider;
  lookup: CallLookup;
}

/**
 * Claims due calls: the single most overdue call of any provider, and when its provider answers lookups
 * without a rate limit (the simulator), up to a batch of other such calls with it. The most overdue call
 * goes first whatever its provider, so a stream of due simulator calls never starves a rate-limited
 * provider's (whose calls also never wait at its gate past their lease).
 */
async function claimCalls(deps: AppDeps, now: Date, leaseUntil: Date): Promise<CallRow[]> {
  const [first] = await claimDueCalls(deps.db, { now, leaseUntil, limit: 1 });
  if (!first) return [];
  const unlimited = deps.providers
    .all()
    .filter((provider) => !Number.isFinite(provider.lookupsPerSecond))
    .map((provider) => provider.name);
  if (!unlimited.includes(first.provider)) return [first];
  const more = await claimDueCalls(deps.db, { now, leaseUntil, limit: PROGRESS_BATCH - 1, providers: unlimited });
  return [first, ...more].sort((a, b) => a.id.localeCompare(b.id));
}

/** Looks claimed calls up (a failure or an unconfigured provider puts the call off); returns the lookups made. */
async function lookUpClaimed(deps: AppDeps, gate: LookupGate, calls: CallRow[], retryAt: Date): Promise<LookedUp[]> {
  const looked = await Promise.all(
    calls.map(async (call): Promise<LookedUp | null> => {
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
      try {
        return { provider, lookup: await lookUpCall(deps, provider, call) };
      } catch (error) {
        deps.logger.warn(
          { provider: provider.name, callId: call.id, err: error },
          'a call could not be brought up to date; tried again later',
        );
        await retryCallAt(deps, call, retryAt);
        return null;
      }
    }),
  );
  return looked.filter((entry) => entry !== null);
}

/**
 * Applies the lookups, all in one transaction with the org-wide writes batched; when that fails, each
 * in a transaction of its own, so one call's fault leaves the others' progress (and is put off itself).
 * Returns each call as it then stands, null for one put off.
 */
async function applyLookups(deps: AppDeps, looked: LookedUp[], retryAt: Date): Promise<Array<CallRow | null>> {
  if (looked.length > 1) {
    try {
      return await deps.db.transaction().execute((trx) =>
        withWritesBatched(trx, async () => {
          const after: CallRow[] = [];
          for (const { provider, lookup } of looked) after.push(await applyLookup(deps, trx, provider, lookup, null));
          return after;
        }),
      );
    } catch {
      // Rolled back whole; the calls one by one below show (and log) which of them fails.
    }
  }
  // One after another: while the database is down the first put-off fails too, and ends the step.
  const after: Array<CallRow | null> = [];
  for (const { provider, lookup } of looked) {
    try {
      after.push(await deps.db.transaction().execute((trx) => applyLookup(deps, trx, provider, lookup, null)));
    } catch (error) {
      deps.logger.warn(
        { provider: provider.name, callId: lookup.call.id, err: error },
        'a call could not be brought up to date; tried again later',
      );
      await retryCallAt(deps, lookup.call, retryAt);
      after.push(null);
    }
  }
  return after;
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
 * Recovers the most overdue placement, or else advances the calls due (see claimCalls), if any; returns
 * whether there was work, and counts status changes in the metrics. Placements go first: they are few,
 * each holds credits and an Idempotency-Key, and calls looked up again and again must not keep them
 * waiting. A provider that is not configured here, or fails, is tried again later. Throws on database
 * errors.
 */
export async function advanceDueCalls(deps: AppDeps, gate: LookupGate): Promise<boolean> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + deps.config.providerTimeoutMs * 2 + PROVIDER_RETRY_MS);
  const retryAt = new Date(now.getTime() + PROVIDER_RETRY_MS);
  if (await recoverOnePlacement(deps, gate, leaseUntil, retryAt)) return true;
  const calls = await claimCalls(deps, now, leaseUntil);
  if (calls.length === 0) return false;
  const looked = await lookUpClaimed(deps, gate, calls, retryAt);
  const applied = await applyLookups(deps, looked, retryAt);
  for (const [index, { provider, lookup }] of looked.entries()) {
    const after = applied[index];
    if (!after) continue;
    let step: StatusStep;
    try {
      step = await hangUpIfDue(deps, provider, lookup, after, null);
    } catch (error) {
      deps.logger.warn(
        { provider: provider.name, callId: lookup.call.id, err: error },
        'a call could not be hung up at its deadline; tried again later',
      );
      await retryCallAt(deps, lookup.call, retryAt);
      continue;
    }
    if (step.from !== step.to) deps.metrics.callStatusChanges.inc(step);
  }
  return true;
}

/**
 * Starts the worker. While idle only the first lane polls (every simulated second, within bounds);
 * the others sleep until it finds work, then all lanes drain due calls in parallel. While the database
 * is unavailable only the first lane tries, backing off. Never throws.
 */
export function startCallProgressWorker(deps: AppDeps): BackgroundWorker {
  const fastest = Math.min(...deps.providers.all().map((provider) => provider.secondMs));
  const idleMs = Math.min(deps.config.callPollIntervalMs, Math.max(PROGRESS_IDLE_WAIT_MS.min, fastest));
  const gate = new LookupGate(deps.metrics);
  let stopping = false;
  const sleepers = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of [...sleepers]) wake();
  };
  const sleep = (ms: number | null) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = ms === null ? undefined : setTimeout(wake, ms);
      sleepers.add(wake);
    });

  const outage = new OutageTracker(deps.logger, 'call progress');
  const lane = async (index: number) => {
    while (!stopping) {
      let advanced = false;
      try {
        advanced = await advanceDueCalls(deps, gate);
        outage.succeeded();
      } catch (error) {
        const wait = outage.failed(error);
        if (!stopping) await sleep(index === 0 ? wait : null);
        continue;
      }
      if (advanced) wakeAll();
      else if (!stopping) await sleep(index === 0 ? idleMs : null);
    }
  };
  const lanes = Promise.all(Array.from({ length: LANES }, (_, index) => lane(index)));

  return {
    async stop(timeoutMs: number) {
      stopping = true;
      wakeAll();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([lanes, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
    },
  };
}
