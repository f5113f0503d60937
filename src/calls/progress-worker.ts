// The call-progress worker: claims calls whose next step is due (FOR UPDATE SKIP LOCKED, so several
// processes can share one database) and advances each in its own transaction. All progress lives in
// the calls table, so a restarted process picks up every call in flight where it stands.
import type { AppDeps } from '../app-deps.js';
import type { BackgroundWorker } from '../background-worker.js';
import { claimDueCall } from './queries.js';
import { advanceCall, withStatusCount } from './lifecycle.js';
import { OutageTracker } from '../database/outage.js';
import { PROGRESS_IDLE_WAIT_MS, PROGRESS_LANES as LANES } from './policy.js';

/**
 * Advances the most overdue call, if any; returns whether one was due, and counts a status change in
 * the metrics once committed. Throws on database or provider errors.
 */
export async function advanceOneDueCall(deps: AppDeps): Promise<boolean> {
  const step = await deps.db.transaction().execute(async (trx) => {
    const now = deps.clock.now();
    const call = await claimDueCall(trx, now);
    if (!call) return null;
    const after = await withStatusCount(trx, call, (locked) => advanceCall(trx, deps.provider, locked, now, null));
    return { from: call.status, to: after.status };
  });
  if (step && step.from !== step.to) deps.metrics.callStatusChanges.inc(step);
  return step !== null;
}

/**
 * Starts the worker. While idle only the first lane polls (every simulated second, within bounds);
 * the others sleep until it finds work, then all lanes drain due calls in parallel. While the database
 * is unavailable only the first lane tries, backing off. Never throws.
 */
export function startCallProgressWorker(deps: AppDeps): BackgroundWorker {
  const idleMs = Math.min(deps.config.callPollIntervalMs, Math.max(PROGRESS_IDLE_WAIT_MS.min, deps.provider.secondMs));
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
        advanced = await advanceOneDueCall(deps);
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
