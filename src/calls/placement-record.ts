// The second step of a placement: placements the provider took become queued calls with the provider's
// ids, a whole group in one statement (db/functions/record_placed_calls.sql) when no Idempotency-Key and
// no waiting report needs more, else in a transaction that adds a statement per key and per waiting
// report; and a placement that came to nothing is removed with its hold given back.
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { returnHold } from '../orgs/credits.js';
import type { Placed, VoiceProvider } from './provider/types.js';
import type { CallRow, NewCall } from './queries.js';
import { insertPlacedCalls, takePlacement, type PlacementRow } from './placement-queries.js';
import { countStatusChange, withWritesBatched } from './batched-writes.js';
import { forgetKey, rememberResponse } from './idempotency.js';
import { applyWaitingReports } from './provider-events.js';
import { toCallCreated } from './mapper.js';

/**
 * A placement the provider took: the placement, the provider's call id, and when the call is first looked
 * up (null: once it has been quiet for PROVIDER_RECONCILE_AFTER_S).
 */
export interface TakenPlacement {
  placement: PlacementRow;
  providerCallId: string;
  nextLookupAt: Date | null;
}

/** The queued calls that placements the provider took become. */
function callsOf(deps: AppDeps, provider: VoiceProvider, taken: readonly TakenPlacement[], now: Date): NewCall[] {
  const quietAt = new Date(now.getTime() + deps.config.providerReconcileAfterS * 1000);
  return taken.map(({ placement, providerCallId, nextLookupAt }) => ({
    id: placement.id,
    org_id: placement.org_id,
    agent_id: placement.agent_id,
    status: 'queued' as const,
    from_e164: placement.from_e164,
    to_e164: placement.to_e164,
    language: placement.language,
    max_duration_sec: placement.max_duration_sec,
    rate_paise_per_minute: placement.rate_paise_per_minute,
    hold_paise: placement.hold_paise,
    metadata: placement.metadata,
    provider: provider.name,
    provider_call_id: providerCallId,
    next_step_at: nextLookupAt ?? quietAt,
    created_at: placement.created_at,
    campaign_id: placement.campaign_id,
    campaign_contact_id: placement.campaign_contact_id,
    campaign_attempt: placement.campaign_attempt,
  }));
}

/** Each taken placement's call among `calls`, in the order given; null for a placement already gone. */
function inOrder(taken: readonly TakenPlacement[], calls: readonly CallRow[]): Array<CallRow | null> {
  const byId = new Map(calls.map((call) => [call.id, call]));
  return taken.map(({ placement }) => byId.get(placement.id) ?? null);
}

/**
 * Stores placements the provider took as queued calls with the provider's ids (their holds now in the
 * ledger), stores each Idempotency-Key's response, and applies the reports that arrived meanwhile, in
 * `trx`: one statement for the calls whatever their number, then one per key, one reading the waiting
 * reports and one per report. Returns each call as placed, in the order given, or null for a placement
 * already gone (recovery settled it first).
 */
export async function recordPlacedCalls(
  trx: Db,
  deps: AppDeps,
  provider: VoiceProvider,
  taken: readonly TakenPlacement[],
): Promise<Array<CallRow | null>> {
  const now = deps.clock.now();
  const calls = (await insertPlacedCalls(trx, provider.name, callsOf(deps, provider, taken, now), false))!;
  const keys = new Map(taken.map(({ placement }) => [placement.id, placement.idempotency_key]));
  for (const call of calls) {
    const key = keys.get(call.id) ?? null;
    if (key !== null) await rememberResponse(trx, { orgId: call.org_id, key, response: toCallCreated(call) });
  }
  const current = await applyWaitingReports(trx, provider, calls, now);
  // Last, and once per call, like every counter write (see withStatusCount).
  for (const call of current) await countStatusChange(trx, call.org_id, null, call.status);
  return inOrder(taken, calls);
}

/**
 * recordPlacedCalls in one statement and no transaction, for placements without an Idempotency-Key when
 * no report waits for their calls: the statement moves the status counters too. Null, having written
 * nothing, for any other group, which then takes recordPlacedCalls in a transaction.
 */
async function recordPlacedCallsAlone(
  deps: AppDeps,
  provider: VoiceProvider,
  taken: readonly TakenPlacement[],
): Promise<Array<CallRow | null> | null> {
  if (taken.some(({ placement }) => placement.idempotency_key !== null)) return null;
  const calls = await insertPlacedCalls(deps.db, provider.name, callsOf(deps, provider, taken, deps.clock.now()), true);
  return calls && inOrder(taken, calls);
}

/** Removes a placement that came to nothing: hold given back, Idempotency-Key freed. False when already gone. */
export async function voidPlacement(trx: Db, placementId: string): Promise<boolean> {
  const placement = await takePlacement(trx, placementId);
  if (!placement) return false;
  await returnHold(trx, { orgId: placement.org_id, paise: placement.hold_paise });
  if (placement.idempotency_key !== null)
    await forgetKey(trx, { orgId: placement.org_id, key: placement.idempotency_key });
  return true;
}

/** Counts a call recorded as placed in the metrics. */
function countPlaced(deps: AppDeps, provider: VoiceProvider): void {
  deps.metrics.providerPlacements.inc({ provider: provider.name, outcome: 'placed' });
  deps.metrics.callStatusChanges.inc({ from: 'none', to: 'queued' });
}

/**
 * Records placements the provider took as calls (the second transaction), all in one transaction with
 * the org-wide writes batched; when that fails, each in its own. Returns what became of each: its call,
 * null for a placement already gone (recovery settled it), or the database error of its own transaction
 * (the placement is left to recovery).
 */
export async function recordPlacements(
  deps: AppDeps,
  provider: VoiceProvider,
  taken: ReadonlyArray<{ placement: PlacementRow; placed: Placed }>,
): Promise<Array<PromiseSettledResult<CallRow | null>>> {
  const record = async (group: typeof taken) => {
    const placements = group.map(({ placement, placed }) => ({ placement, ...placed }));
    return (
      (await recordPlacedCallsAlone(deps, provider, placements)) ??
      (await deps.db
        .transaction()
        .execute((trx) => withWritesBatched(trx, () => recordPlacedCalls(trx, deps, provider, placements))))
    );
  };
  const counted = (calls: Array<CallRow | null>) => {
    for (const call of calls) if (call) countPlaced(deps, provider);
    return calls.map((call): PromiseSettledResult<CallRow | null> => ({ status: 'fulfilled', value: call }));
  };
  if (taken.length > 1) {
    try {
      return counted(await record(taken));
    } catch (error) {
      // Rolled back whole; one by one below, each placement stands or fails alone.
      deps.logger.warn(
        { provider: provider.name, placements: taken.length, err: error },
        'a group of placements could not be recorded together; recording them one by one',
      );
    }
  }
  const results: Array<PromiseSettledResult<CallRow | null>> = [];
  for (const entry of taken) {
    try {
      results.push(...counted(await record([entry])));
    } catch (error) {
      results.push({ status: 'rejected', reason: error });
    }
  }
  return results;
}
