// What the two drivers of call progress share: the call-progress worker (calls of providers that look
// up in the process, the simulator) and the reconciliation job (placements left unsettled, and calls of
// providers over the network). A call that cannot be brought up to date is put off to a later time, and
// a call found connected past its deadline is hung up after the transaction that found it.
import type { AppDeps } from '../app-deps.js';
import { lockCall, type CallRow } from './queries.js';
import { hangUpIfDue, type CallLookup, type StatusStep } from './reconcile.js';
import type { VoiceProvider } from './provider/types.js';
import { scheduleCall } from './lifecycle.js';
import { PROVIDER_RETRY_MS } from './policy.js';

/** A call's lookup and the provider it came from. */
export interface LookedUp {
  provider: VoiceProvider;
  lookup: CallLookup;
}

/** A call looked up and changed in a transaction, as it then stands (null: put off or left). */
export interface Applied extends LookedUp {
  after: CallRow | null;
}

/** Moves a call's next step to `at` (a claimed call stays leased until then). */
export async function retryCallAt(deps: AppDeps, call: { id: string; org_id: string }, at: Date): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const locked = await lockCall(trx, call.org_id, call.id);
    if (locked && locked.next_step_at !== null) await scheduleCall(trx, locked, at);
  });
}

/** Logs why a call could not be brought up to date, and moves its next step to `retryAt`. */
export async function putOff(deps: AppDeps, call: CallRow, error: unknown, retryAt: Date): Promise<void> {
  deps.logger.warn(
    { provider: call.provider, callId: call.id, err: error },
    'a call could not be brought up to date; tried again later',
  );
  await retryCallAt(deps, call, retryAt);
}

/** Hangs up the calls found connected past their deadline (a failure puts the call off), counting status changes. */
export async function hangUpDue(deps: AppDeps, applied: readonly Applied[], retryAt: Date): Promise<void> {
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

/** The providers whose lookups are worked out in the process (the simulator). */
export function localProviders(deps: Pick<AppDeps, 'providers'>): VoiceProvider[] {
  return deps.providers.all().filter((provider) => provider.lookupIsLocal);
}

/** When a step that starts at `now` leases its calls until, and when it tries a failed one again. */
export function stepTimes(deps: AppDeps, now: Date): { leaseUntil: Date; retryAt: Date } {
  return {
    leaseUntil: new Date(now.getTime() + deps.config.providerTimeoutMs * 2 + PROVIDER_RETRY_MS),
    retryAt: new Date(now.getTime() + PROVIDER_RETRY_MS),
  };
}
