// Calls: placement with its pre-call checks and hold, org-scoped reads, and cancellation.
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { DomainError, notFound } from '../errors.js';
import { unknownCursor, type PageStart } from '../contract/pagination.js';
import { findCall, listCallsPage, lockCall, type CallListRow, type CallRow } from './queries.js';
import { countRecentByStatus } from './status-count-queries.js';
import { deleteOldTimelineEntries, listTimeline } from './timeline-queries.js';
import { deleteExpiredIdempotencyKeys } from './idempotency-queries.js';
import { deleteOldProviderEvents } from './provider-event-queries.js';
import { deleteInBatches } from '../database/batches.js';
import { endStoppedCall, providerRef, withStatusCount } from './lifecycle.js';
import { reconcileCall } from './reconcile.js';
import { CALL_STATUSES, isTerminal, type CallStatus } from './status.js';
import { requireCampaignRef } from '../campaigns/service.js';

export { placeCall, type PlaceCallRequest } from './placement.js';

/**
 * One page of the org's calls, newest first, in `status` and of the campaign `campaignId` when given,
 * and how many match in all (from the counters). The campaign must be the org's (else not_found, param
 * campaign_id), then a cursor must be a call of the org (else invalid_request).
 */
export async function listCalls(
  db: Db,
  orgId: string,
  page: { status: CallStatus | undefined; campaignId: string | undefined; limit: number; start: PageStart },
): Promise<{ rows: CallListRow[]; total: number; more: boolean }> {
  const { start, campaignId } = page;
  if (campaignId !== undefined) await requireCampaignRef(db, orgId, campaignId, 'campaign_id');
  if ('cursor' in start && !(await findCall(db, orgId, start.cursor))) throw unknownCursor(start.side);
  return listCallsPage(db, { orgId, ...page });
}

/**
 * How many of the org's calls were created since `since`, by status, each counted up to `cap` (a count
 * equal to `cap` means "at least"); statuses without calls are left out.
 */
export async function countRecentCalls(
  db: Db,
  orgId: string,
  since: Date,
  cap: number,
): Promise<Array<{ status: CallStatus; count: number }>> {
  const counts = await countRecentByStatus(db, orgId, CALL_STATUSES, since, cap);
  return counts.filter((entry) => entry.count > 0);
}

/** The org's call with its timeline. Throws DomainError not_found (param id) for an unknown or foreign id. */
export async function getCall(db: Db, orgId: string, id: string) {
  const call = await findCall(db, orgId, id);
  if (!call) throw notFound('call');
  return { call, timeline: await listTimeline(db, id) };
}

/**
 * Cancels a call that has not connected (`canceled`, nothing charged) or hangs up a connected one
 * (`completed`, connected seconds charged). The call is first brought up to date with its provider, and
 * the provider is asked to stop it outside any transaction. Events carry the request's `traceparent`.
 * Throws DomainError not_found (param id); invalid_state when the call has ended or its provider cannot
 * stop it; upstream_error when its provider is not configured or fails.
 */
export async function cancelCall(
  deps: AppDeps,
  orgId: string,
  id: string,
  traceparent: string | null,
): Promise<CallRow> {
  const found = await findCall(deps.db, orgId, id);
  if (!found) throw notFound('call');
  const provider = deps.providers.get(found.provider);
  if (!isTerminal(found.status) && !provider) {
    throw new DomainError(
      'upstream_error',
      `The call's voice provider (${found.provider}) is not configured on this service.`,
    );
  }
  if (provider && !isTerminal(found.status)) {
    try {
      await reconcileCall(deps, provider, found, traceparent);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      deps.logger.warn(
        { provider: provider.name, callId: id, err: error },
        'a call could not be looked up before its cancellation',
      );
      throw new DomainError(
        'upstream_error',
        'The voice provider did not answer; the call was not canceled. Try again.',
      );
    }
  }
  const call = await findCall(deps.db, orgId, id);
  if (!call || !provider || isTerminal(call.status)) throw alreadyEnded(call?.status ?? found.status);
  const at = deps.clock.now();
  let stop;
  try {
    stop = await provider.stop(providerRef(call), {
      connected: call.status === 'in_progress',
      at,
      signal: AbortSignal.timeout(deps.config.providerTimeoutMs),
    });
  } catch (error) {
    deps.logger.warn({ provider: provider.name, callId: id, err: error }, 'the voice provider failed to stop a call');
    throw new DomainError('upstream_error', 'The voice provider did not stop the call; it goes on. Try again.');
  }
  if (!stop.stopped) throw new DomainError('invalid_state', `The call cannot be canceled: ${stop.message}`);
  const ended = await deps.db.transaction().execute(async (trx) => {
    const locked = await lockCall(trx, orgId, id);
    if (!locked || isTerminal(locked.status)) throw alreadyEnded(locked?.status ?? call.status);
    return withStatusCount(trx, locked, (current) =>
      endStoppedCall(trx, current, { at, conversation: stop.conversation, secondMs: provider.secondMs }, traceparent),
    );
  });
  deps.metrics.callStatusChanges.inc({ from: call.status, to: ended.status });
  return ended;
}

/** The invalid_state answer for canceling a call that has ended. */
function alreadyEnded(status: CallStatus): DomainError {
  return new DomainError('invalid_state', `The call has already ended (${status}) and cannot be canceled.`);
}

/**
 * Removes call history: timeline entries and provider reports from before `timelineBefore`, and
 * Idempotency-Key records from before `keysBefore`, in batches of `batchSize`. Returns the rows removed
 * per table; database errors propagate.
 */
export async function pruneCallHistory(
  db: Db,
  cutoffs: { timelineBefore: Date; keysBefore: Date },
  batchSize: number,
): Promise<{ call_timeline: number; call_idempotency_keys: number; provider_events: number }> {
  return {
    call_timeline: await deleteInBatches(
      () => deleteOldTimelineEntries(db, cutoffs.timelineBefore, batchSize),
      batchSize,
    ),
    call_idempotency_keys: await deleteInBatches(
      () => deleteExpiredIdempotencyKeys(db, cutoffs.keysBefore, batchSize),
      batchSize,
    ),
    provider_events: await deleteInBatches(
      () => deleteOldProviderEvents(db, cutoffs.timelineBefore, batchSize),
      batchSize,
    ),
  };
}
