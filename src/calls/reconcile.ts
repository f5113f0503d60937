// Bringing a call up to date with its provider: look it up, apply what it reports through the same
// path as webhooks, hang it up at its max_duration_sec, and schedule the next look. A call the provider
// does not know ends failed (provider_error) with its hold released. Placements whose provider never
// answered are settled the same way: placed once, or voided.
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import type { Conversation, LookupResult, VoiceProvider } from './provider/types.js';
import { lockCall, type CallRow } from './queries.js';
import type { PlacementRow } from './placement-queries.js';
import {
  endCall,
  endStoppedCall,
  hangUpDeadline,
  providerRef,
  scheduleCall,
  withStatusCount,
  type Cause,
} from './lifecycle.js';
import { ingestReports } from './provider-events.js';
import { recordPlacedCalls, voidPlacement } from './placement-record.js';
import { isTerminal, type CallStatus } from './status.js';

/** A call's status before and after a step, for the status metrics. */
export interface StatusStep {
  from: CallStatus;
  to: CallStatus;
}

/** Looks a call up with the provider's deadline, counting the outcome; throws on transport failures. */
async function lookUp(
  deps: AppDeps,
  provider: VoiceProvider,
  ref: Parameters<VoiceProvider['lookup']>[0],
): Promise<LookupResult> {
  const now = deps.clock.now();
  try {
    const found = await provider.lookup(ref, { now, signal: AbortSignal.timeout(deps.config.providerTimeoutMs) });
    deps.metrics.providerLookups.inc({ provider: provider.name, outcome: found.found ? 'found' : 'not_found' });
    return found;
  } catch (error) {
    deps.metrics.providerLookups.inc({ provider: provider.name, outcome: 'error' });
    throw error;
  }
}

/** When a call that is not ending yet is next looked at: the provider's hint or when it goes quiet, and its deadline. */
export function nextLookAt(deps: AppDeps, provider: VoiceProvider, call: CallRow, hint: Date | null, now: Date): Date {
  const quiet = new Date(now.getTime() + deps.config.providerReconcileAfterS * 1000);
  const candidates = [hint ?? quiet, hangUpDeadline(call, provider.secondMs)].filter((at): at is Date => at !== null);
  return new Date(Math.min(...candidates.map((at) => at.getTime())));
}

/** What the provider reported a call produced when it ended, cut to the call's max_duration_sec. */
function reportedConversation(call: CallRow, found: LookupResult): Conversation | null {
  if (!found.found) return null;
  const ended = found.events.find((report) => report.event.type === 'ended')?.event;
  const conversation = ended?.type === 'ended' ? ended.ending.conversation : null;
  return conversation && { ...conversation, durationSec: Math.min(conversation.durationSec, call.max_duration_sec) };
}

/**
 * Hangs up a connected call at its deadline (the provider asked outside any transaction), then ends it.
 * A provider that cannot stop it has ended it itself at about that moment: what its own report of the
 * end says the call produced (`reported`) is kept then.
 */
async function hangUpAtDeadline(
  deps: AppDeps,
  provider: VoiceProvider,
  call: CallRow,
  hangUp: { deadline: Date; reported: Conversation | null },
  cause: Cause,
): Promise<CallRow> {
  const { deadline } = hangUp;
  const stop = await provider.stop(providerRef(call), {
    connected: true,
    at: deadline,
    signal: AbortSignal.timeout(deps.config.providerTimeoutMs),
  });
  const conversation = stop.stopped ? stop.conversation : hangUp.reported;
  return deps.db.transaction().execute(async (trx) => {
    const locked = await lockCall(trx, call.org_id, call.id);
    if (!locked || isTerminal(locked.status)) return locked ?? call;
    return withStatusCount(trx, locked, (current) =>
      endStoppedCall(trx, current, { at: deadline, conversation, secondMs: provider.secondMs }, cause),
    );
  });
}

/** What a provider said of a call when it was looked up (outside any transaction), and when. */
export interface CallLookup {
  call: CallRow;
  found: LookupResult;
  at: Date;
}

/** Looks `call` up with `provider`; throws on the provider's transport failures. */
export async function lookUpCall(deps: AppDeps, provider: VoiceProvider, call: CallRow): Promise<CallLookup> {
  const found = await lookUp(deps, provider, providerRef(call));
  return { call, found, at: deps.clock.now() };
}

/** How the caller prepared a lookup's call: locked by `trx` before the lookup, its reports maybe stored already. */
export interface LockedLookup {
  /** What storeLockedCallReports returned for a batch this call is in; unset: stored by applyLookup. */
  storedReports?: ReadonlyMap<string, number>;
}

/**
 * Applies a lookup to its call in `trx` (events it emits carry `cause`): what the provider reported,
 * or the end of a call it does not know, and when the call is next looked at. With `lockedAlready`,
 * the lookup's call is the row as `trx` locked it before the lookup; otherwise it is locked here.
 * Returns the call as it then stands (a connected call past its deadline is left for hangUpIfDue).
 */
export async function applyLookup(
  deps: AppDeps,
  trx: Db,
  provider: VoiceProvider,
  lookup: CallLookup,
  cause: Cause,
  lockedAlready: LockedLookup | null = null,
): Promise<CallRow> {
  const { call, found, at: now } = lookup;
  const locked = lockedAlready ? call : await lockCall(trx, call.org_id, call.id);
  if (!locked || isTerminal(locked.status)) return locked ?? call;
  if (!found.found) {
    deps.logger.warn(
      { provider: provider.name, callId: call.id },
      'the voice provider does not know this call; it ends failed',
    );
    return withStatusCount(trx, locked, (current) =>
      endCall(trx, current, { status: 'failed', reason: 'provider_error', at: now, conversation: null }, cause),
    );
  }
  // When the call is next looked at, as it will stand; null once its deadline has passed (it is hung up).
  const schedule = (moved: CallRow) => {
    const deadline = hangUpDeadline(moved, provider.secondMs);
    return deadline && deadline <= now ? null : nextLookAt(deps, provider, moved, found.nextLookupAt, now);
  };
  const { moves } = await ingestReports(trx, provider, found.events, {
    now,
    cause,
    cutAtDeadline: true,
    locked: {
      call: locked,
      schedule,
      ...(lockedAlready?.storedReports ? { stored: lockedAlready.storedReports } : {}),
    },
  });
  const current = moves.find((move) => move.call.id === locked.id)?.call ?? locked;
  if (isTerminal(current.status)) return current;
  const next = schedule(current);
  // Already set when the reports moved the call (in the same update).
  if (next === null || current.next_step_at?.getTime() === next.getTime()) return current;
  return scheduleCall(trx, current, next);
}

/** The deadline of a call connected past it by the time of its lookup, which hangUpIfDue hangs up; else null. */
export function passedDeadline(provider: VoiceProvider, lookup: CallLookup, after: CallRow): Date | null {
  const deadline = hangUpDeadline(after, provider.secondMs);
  return deadline && deadline <= lookup.at ? deadline : null;
}

/**
 * Hangs up a call the lookup found connected past its deadline (see hangUpAtDeadline); returns the
 * call's status before the lookup and after.
 */
export async function hangUpIfDue(
  deps: AppDeps,
  provider: VoiceProvider,
  lookup: CallLookup,
  after: CallRow,
  cause: Cause,
): Promise<StatusStep> {
  const deadline = passedDeadline(provider, lookup, after);
  const ended = deadline
    ? await hangUpAtDeadline(
        deps,
        provider,
        after,
        { deadline, reported: reportedConversation(after, lookup.found) },
        cause,
      )
    : after;
  return { from: lookup.call.status, to: ended.status };
}

/**
 * Brings `call` up to date with `provider` (events it emits carry `cause`); returns its status before
 * and after. Throws on the provider's transport failures and on database errors.
 */
export async function reconcileCall(
  deps: AppDeps,
  provider: VoiceProvider,
  call: CallRow,
  cause: Cause,
): Promise<StatusStep> {
  const lookup = await lookUpCall(deps, provider, call);
  const after = await deps.db.transaction().execute((trx) => applyLookup(deps, trx, provider, lookup, cause));
  return hangUpIfDue(deps, provider, lookup, after, cause);
}

/**
 * Settles a placement whose provider never answered (or whose process died before recording it), once
 * its request to the provider can no longer be under way: a provider that knows the call gets it
 * recorded, once; one that does not has the placement voided and its hold returned.
 * Returns the new call's step, or null. Throws on transport failures and database errors.
 */
export async function recoverPlacement(
  deps: AppDeps,
  provider: VoiceProvider,
  placement: PlacementRow,
): Promise<StatusStep | null> {
  const found = await lookUp(deps, provider, {
    callId: placement.id,
    providerCallId: null,
    toE164: placement.to_e164,
    placedAt: placement.created_at,
  });
  const now = deps.clock.now();
  if (!found.found) {
    const voided = await deps.db.transaction().execute((trx) => voidPlacement(trx, placement.id));
    if (voided) {
      deps.metrics.providerPlacements.inc({ provider: provider.name, outcome: 'voided' });
      deps.logger.info(
        { provider: provider.name, callId: placement.id },
        'a placement the provider never took was voided',
      );
    }
    return null;
  }
  const [call] = await deps.db
    .transaction()
    .execute((trx) =>
      recordPlacedCalls(trx, deps, provider, [{ placement, providerCallId: found.providerCallId, nextLookupAt: now }]),
    );
  if (!call) return null;
  deps.metrics.providerPlacements.inc({ provider: provider.name, outcome: 'recovered' });
  deps.metrics.callStatusChanges.inc({ from: 'none', to: 'queued' });
  return reconcileCall(deps, provider, call, null);
}
