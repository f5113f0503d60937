// The call-progress worker: claims calls whose next step is due, and placements whose provider never
// answered, each with a lease (one statement, SKIP LOCKED, so several processes share one database and
// a process that dies leaves its work to another), and brings each up to date with its provider outside
// any transaction. All progress lives in the database, so a restarted process picks up every call in
// flight where it stands, and recovers placements a killed process left between its two transactions.
import type { AppDeps } from '../app-deps.js';
import type { BackgroundWorker } from '../background-worker.js';
import { claimDueCall, lockCall } from './queries.js';
import { claimDuePlacement, schedulePlacementRecovery } from './placement-queries.js';
import { reconcileCall, recoverPlacement, type StatusStep } from './reconcile.js';
import { scheduleCall } from './lifecycle.js';
import { OutageTracker } from '../database/outage.js';
import { PROGRESS_IDLE_WAIT_MS, PROGRESS_LANES as LANES, PROVIDER_RETRY_MS } from './policy.js';
import { LookupGate } from './lookup-gate.js';

/** Moves a claimed call's next step to `at` (it stays leased until then). */
async function retryCallAt(deps: AppDeps, call: { id: string; org_id: string }, at: Date): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const locked = await lockCall(trx, call.org_id, call.id);
    if (locked && locked.next_step_at !== null) await scheduleCall(trx, locked, at);
  });
}

/**
 * Recovers the most overdue placement, or else advances the most overdue call, if any; returns whether
 * one was due, and counts a status change in the metrics. Placements go first: they are few, each holds
 * credits and an Idempotency-Key, and calls looked up again and again must not keep them waiting. A
 * provider that is not configured here, or fails, is tried again later. Throws on database errors.
 */
export async function advanceOneDueCall(deps: AppDeps, gate: LookupGate): Promise<boolean> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + deps.config.providerTimeoutMs * 2 + PROVIDER_RETRY_MS);
  const retryAt = new Date(now.getTime() + PROVIDER_RETRY_MS);
  let step: StatusStep | null = null;
  const placement = await claimDuePlacement(deps.db, now, leaseUntil);
  if (placement) {
    const provider = deps.providers.get(placement.provider);
    try {
      if (!provider) throw new Error(`provider ${placement.provider} is not configured in this process`);
      await gate.take(provider);
      step = await recoverPlacement(deps, provider, placement);
    } catch (error) {
      deps.logger.warn(
        { provider: placement.provider, callId: placement.id, err: error },
        'a placement could not be settled; tried again later',
      );
      await schedulePlacementRecovery(deps.db, placement.id, retryAt);
      return true;
    }
  } else {
    const call = await claimDueCall(deps.db, now, leaseUntil);
    if (!call) return false;
    const provider = deps.providers.get(call.provider);
    if (!provider) {
      deps.logger.warn(
        { provider: call.provider, callId: call.id },
        'a call in flight uses a provider this process is not configured for',
      );
      await retryCallAt(deps, call, retryAt);
      return true;
    }
    await gate.take(provider);
    try {
      step = await reconcileCall(deps, provider, call, null);
    } catch (error) {
      deps.logger.warn(
        { provider: provider.name, callId: call.id, err: error },
        'a call could not be brought up to date; tried again later',
      );
      await retryCallAt(deps, call, retryAt);
      return true;
    }
  }
  if (step && step.from !== step.to) deps.metrics.callStatusChanges.inc(step);
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
        advanced = await advanceOneDueCall(deps, gate);
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
