// The second step of a placement: placements the provider took become queued calls with the provider's
// ids, set-based (a group of placements costs the same few statements as one, besides a statement per
// Idempotency-Key and per waiting report), and a placement that came to nothing is removed with its
// hold given back.
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { confirmHolds, returnHold } from '../orgs/credits.js';
import type { Placed, VoiceProvider } from './provider/types.js';
import { insertCalls, type CallRow } from './queries.js';
import { takePlacement, takePlacements, type PlacementRow } from './placement-queries.js';
import { lockProviderCallIds } from './provider-event-queries.js';
import { countStatusChange, withWritesBatched } from './batched-writes.js';
import { forgetKey, rememberResponse } from './idempotency.js';
import { applyWaitingReports } from './provider-events.js';
import { toCallCreated } from './mapper.js';

/**
 * A placement the provider took: its id, the provider's call id, and when the call is first looked up
 * (null: once it has been quiet for PROVIDER_RECONCILE_AFTER_S).
 */
export interface TakenPlacement {
  placementId: string;
  providerCallId: string;
  nextLookupAt: Date | null;
}

/**
 * Stores placements the provider took as queued calls with the provider's ids (their holds now in the
 * ledger), applies the reports that arrived meanwhile, and stores each Idempotency-Key's response; in
 * `trx`, with one statement for each of those steps whatever the number of placements (besides one per
 * key and per waiting report). Returns each call as placed, in the order given, or null for a placement
 * already gone (recovery settled it first).
 */
export async function recordPlacedCalls(
  trx: Db,
  deps: AppDeps,
  provider: VoiceProvider,
  taken: readonly TakenPlacement[],
): Promise<Array<CallRow | null>> {
  // The provider call ids' locks first: a report naming one either finished before, or waits and
  // then finds the call (see provider-events.ts), never held after the look for held ones below.
  await lockProviderCallIds(
    trx,
    provider.name,
    taken.map((placed) => placed.providerCallId),
  );
  const found = await takePlacements(
    trx,
    taken.map((placed) => placed.placementId),
  );
  const placements = new Map(found.map((placement) => [placement.id, placement]));
  const now = deps.clock.now();
  const quietAt = new Date(now.getTime() + deps.config.providerReconcileAfterS * 1000);
  const recorded = taken.flatMap((placed) => {
    const placement = placements.get(placed.placementId);
    return placement ? [{ placement, placed }] : [];
  });
  const calls = await insertCalls(
    trx,
    recorded.map(({ placement, placed }) => ({
      call: {
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
        provider_call_id: placed.providerCallId,
        next_step_at: placed.nextLookupAt ?? quietAt,
        created_at: placement.created_at,
        campaign_id: placement.campaign_id,
        campaign_contact_id: placement.campaign_contact_id,
        campaign_attempt: placement.campaign_attempt,
      },
      firstEntry: { at: placement.created_at, kind: 'status-changed' as const, detail: { status: 'queued' as const } },
    })),
  );
  await confirmHolds(
    trx,
    calls.map((call) => ({ orgId: call.org_id, callId: call.id, paise: call.hold_paise })),
  );
  for (const [index, call] of calls.entries()) {
    const key = recorded[index]!.placement.idempotency_key;
    if (key !== null) await rememberResponse(trx, { orgId: call.org_id, key, response: toCallCreated(call) });
  }
  const current = await applyWaitingReports(trx, provider, calls, now);
  // Last, and once per call, like every counter write (see withStatusCount).
  for (const call of current) await countStatusChange(trx, call.org_id, null, call.status);
  const byId = new Map(calls.map((call) => [call.id, call]));
  return taken.map((placed) => byId.get(placed.placementId) ?? null);
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
  const record = (group: typeof taken) =>
    deps.db.transaction().execute((trx) =>
      withWritesBatched(trx, () =>
        recordPlacedCalls(
          trx,
          deps,
          provider,
          group.map(({ placement, placed }) => ({ placementId: placement.id, ...placed })),
        ),
      ),
    );
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
