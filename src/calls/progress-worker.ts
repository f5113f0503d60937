// The call-progress worker: advances the calls of providers whose lookups are worked out in the process
// (the simulator) as their steps fall due. Due calls are locked (SKIP LOCKED, so several processes
// share one database), looked up and changed in one transaction, a batch at a time, with no lease to
// write; all progress lives in the database, so a restarted process picks up every call in flight where
// it stands. Placements left unsettled and calls of providers over the network are the reconciliation
// job's (reconcile-job.ts).
import type { AppDeps } from '../app-deps.js';
import type { BackgroundWorker } from '../background-worker.js';
import { lockDueCalls, mostOverdueCall, type CallRow } from './queries.js';
import { applyLookup, lookUpCall, passedDeadline } from './reconcile.js';
import { withWritesBatched } from './batched-writes.js';
import { storeLockedCallReports } from './provider-events.js';
import { scheduleCall } from './lifecycle.js';
import type { Db } from '../database/connect.js';
import { OutageTracker } from '../database/outage.js';
import { PROGRESS_BATCH, PROGRESS_GATHER_WAIT, PROGRESS_IDLE_WAIT_MS, PROGRESS_LANES as LANES } from './policy.js';
import { hangUpDue, localProviders, putOff, stepTimes, type Applied, type LookedUp } from './progress-steps.js';

/**
 * Looks calls of local providers that `trx` has locked up, and applies what was found: first every
 * call's reports stored in one statement, then each call moved. A connected call found past its
 * deadline is leased until `leaseUntil`, to be hung up after the commit (see hangUpDue).
 */
async function advanceLocked(deps: AppDeps, trx: Db, calls: readonly CallRow[], leaseUntil: Date): Promise<Applied[]> {
  const looked: LookedUp[] = [];
  for (const call of calls) {
    const provider = deps.providers.get(call.provider)!;
    looked.push({ provider, lookup: await lookUpCall(deps, provider, call) });
  }
  const storedReports = await storeLockedCallReports(
    trx,
    looked.map(({ provider, lookup }) => ({
      provider,
      call: lookup.call,
      events: lookup.found.found ? lookup.found.events : [],
    })),
    deps.clock.now(),
  );
  const applied: Applied[] = [];
  for (const { provider, lookup } of looked) {
    const after = await applyLookup(deps, trx, provider, lookup, null, { storedReports });
    // Only a call hangUpIfDue will hang up is leased: another may be due again already, and stays so.
    const hangsUp = passedDeadline(provider, lookup, after) !== null;
    applied.push({ provider, lookup, after: hangsUp ? await scheduleCall(trx, after, leaseUntil) : after });
  }
  return applied;
}

/**
 * Advances up to a batch of due calls of providers that look up locally (the simulator), each locked,
 * looked up and changed in one transaction with the org-wide writes batched, so a call's row moves once
 * a step and no lease is written. When that fails, each call goes in a transaction of its own, so one
 * call's fault leaves the others' progress (and is put off itself). Returns what was applied, or null
 * when none was due. Throws on database errors.
 */
async function advanceLocalCalls(
  deps: AppDeps,
  providers: readonly string[],
  now: Date,
  leaseUntil: Date,
  retryAt: Date,
): Promise<Applied[] | null> {
  let calls: CallRow[] = [];
  try {
    return await deps.db.transaction().execute((trx) =>
      withWritesBatched(trx, async () => {
        calls = await lockDueCalls(trx, { now, limit: PROGRESS_BATCH, providers });
        return calls.length > 0 ? advanceLocked(deps, trx, calls, leaseUntil) : null;
      }),
    );
  } catch (error) {
    // Nothing was locked: the database failed. Otherwise rolled back whole; one by one shows which call fails.
    if (calls.length === 0) throw error;
  }
  // One after another: while the database is down the first put-off fails too, and ends the step.
  const applied: Applied[] = [];
  for (const call of calls) {
    try {
      const one = await deps.db.transaction().execute(async (trx) => {
        const locked = await lockDueCalls(trx, { now, limit: 1, providers, id: call.id });
        return advanceLocked(deps, trx, locked, leaseUntil);
      });
      applied.push(...one);
    } catch (error) {
      await putOff(deps, call, error, retryAt);
    }
  }
  return applied;
}

/**
 * Advances the due calls of providers that look up in the process, a batch at a time (see
 * advanceLocalCalls), and hangs up those found connected past their deadline; returns how many calls
 * were advanced (0: none was due), and counts status changes in the metrics. Throws on database errors.
 */
export async function advanceDueCalls(deps: AppDeps): Promise<number> {
  const now = deps.clock.now();
  const { leaseUntil, retryAt } = stepTimes(deps, now);
  const local = localProviders(deps).map((provider) => provider.name);
  if (local.length === 0 || !(await mostOverdueCall(deps.db, now, local))) return 0;
  const applied = await advanceLocalCalls(deps, local, now, leaseUntil, retryAt);
  if (!applied) return 0;
  await hangUpDue(deps, applied, retryAt);
  return applied.length;
}

/**
 * Starts the worker. While idle only the first lane polls (every simulated second of the fastest local
 * provider, within bounds); the others sleep until a lane finds a full batch, then all lanes drain due
 * calls in parallel. A lane whose batch was not full waits a little before looking again
 * (PROGRESS_GATHER_WAIT), so steps that fall due one by one are taken in batches rather than in a
 * transaction each. While the database is unavailable only the first lane tries, backing off. Never
 * throws.
 */
export function startCallProgressWorker(deps: AppDeps): BackgroundWorker {
  const fastest = Math.min(...localProviders(deps).map((provider) => provider.secondMs));
  const idleMs = Math.min(deps.config.callPollIntervalMs, Math.max(PROGRESS_IDLE_WAIT_MS.min, fastest));
  const gatherMs = Math.min(PROGRESS_GATHER_WAIT.maxMs, PROGRESS_GATHER_WAIT.simulatedSeconds * fastest);
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
      let advanced = 0;
      try {
        advanced = await advanceDueCalls(deps);
        outage.succeeded();
      } catch (error) {
        const wait = outage.failed(error);
        if (!stopping) await sleep(index === 0 ? wait : null);
        continue;
      }
      if (advanced >= PROGRESS_BATCH) wakeAll();
      else if (advanced > 0) await sleep(gatherMs);
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
