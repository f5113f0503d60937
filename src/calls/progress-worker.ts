// The call-progress worker: brings calls whose next step is due, and placements whose provider never
// answered, up to date with their provider. A call of a provider over the network is claimed with a
// lease (one statement, SKIP LOCKED, so several processes share one database and a process that dies
// leaves its work to another) and looked up outside any transaction. Calls of a provider that answers
// in this process (the simulator) are locked, looked up and changed in one transaction instead, with
// no lease to write. All progress lives in the database, so a restarted process picks up every call in
// flight where it stands, and recovers placements a killed process left between its two transactions.
import type { AppDeps } from '../app-deps.js';
import type { BackgroundWorker } from '../background-worker.js';
import { claimDueCall, lockCall, lockDueCalls, mostOverdueCall, type CallRow } from './queries.js';
import { claimDuePlacement, schedulePlacementRecovery } from './placement-queries.js';
import {
  applyLookup,
  hangUpIfDue,
  lookUpCall,
  passedDeadline,
  recoverPlacement,
  type CallLookup,
  type StatusStep,
} from './reconcile.js';
import { withWritesBatched } from './batched-writes.js';
import { storeLockedCallReports } from './provider-events.js';
import type { VoiceProvider } from './provider/types.js';
import { scheduleCall } from './lifecycle.js';
import type { Db } from '../database/connect.js';
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

/** Logs why a call could not be brought up to date, and moves its next step to `retryAt`. */
async function putOff(deps: AppDeps, call: CallRow, error: unknown, retryAt: Date): Promise<void> {
  deps.logger.warn(
    { provider: call.provider, callId: call.id, err: error },
    'a call could not be brought up to date; tried again later',
  );
  await retryCallAt(deps, call, retryAt);
}

/** A claimed call's lookup and the provider it came from. */
interface LookedUp {
  provider: VoiceProvider;
  lookup: CallLookup;
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
        await putOff(deps, call, error, retryAt);
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
      await putOff(deps, lookup.call, error, retryAt);
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

/** A call looked up and changed in a transaction, as it then stands (null: put off or left). */
interface Applied {
  provider: VoiceProvider;
  lookup: CallLookup;
  after: CallRow | null;
}

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
 * Advances one due call of a provider over the network, the most overdue no one holds: claims it with a
 * lease, looks it up outside any transaction (at the provider's rate), then applies what it found.
 * Returns what was applied, or null when no such call is left to take. Throws on database errors.
 */
async function advanceRemoteCall(
  deps: AppDeps,
  gate: LookupGate,
  claim: { now: Date; leaseUntil: Date; localProviders: readonly string[] },
  retryAt: Date,
): Promise<Applied[] | null> {
  const call = await claimDueCall(deps.db, claim);
  if (!call) return null;
  const looked = await lookUpClaimed(deps, gate, [call], retryAt);
  const applied = await applyLookups(deps, looked, retryAt);
  return looked.map(({ provider, lookup }, index) => ({ provider, lookup, after: applied[index] ?? null }));
}

/** Hangs up the calls found connected past their deadline (a failure puts the call off), counting status changes. */
async function hangUpDue(deps: AppDeps, applied: readonly Applied[], retryAt: Date): Promise<void> {
  for (const { provider, lookup, after } of applied) {
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
}

/**
 * Recovers the most overdue placement, or else advances the calls due, if any; returns whether there
 * was work (a due call held elsewhere is none), and counts status changes in the metrics. Placements
 * go first: they are few, each holds credits and an Idempotency-Key, and calls looked up again and
 * again must not keep them waiting. Then the most overdue call decides, whatever its provider, so a
 * stream of due simulator calls never starves a rate-limited provider's (whose calls also never wait
 * at its gate past their lease): a call of a provider that looks up locally goes with a batch of such
 * calls (advanceLocalCalls), any other alone, or the next such call when another process holds it
 * (advanceRemoteCall). A provider that is not configured here, or fails, is tried again later. Throws
 * on database errors.
 */
export async function advanceDueCalls(deps: AppDeps, gate: LookupGate): Promise<boolean> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + deps.config.providerTimeoutMs * 2 + PROVIDER_RETRY_MS);
  const retryAt = new Date(now.getTime() + PROVIDER_RETRY_MS);
  if (await recoverOnePlacement(deps, gate, leaseUntil, retryAt)) return true;
  const first = await mostOverdueCall(deps.db, now);
  if (!first) return false;
  const local = deps.providers
    .all()
    .filter((provider) => provider.lookupIsLocal)
    .map((provider) => provider.name);
  const applied = local.includes(first.provider)
    ? await advanceLocalCalls(deps, local, now, leaseUntil, retryAt)
    : await advanceRemoteCall(deps, gate, { now, leaseUntil, localProviders: local }, retryAt);
  if (!applied) return false;
  await hangUpDue(deps, applied, retryAt);
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
