// Calls: placement with its pre-call checks and hold, org-scoped reads, and cancellation.
import { randomUUID } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { DomainError, notFound } from '../errors.js';
import { unknownCursor, type PageStart } from '../contract/pagination.js';
import type { AuthContext } from '../orgs/authenticator.js';
import { ProviderRefusedError } from './provider/polling-types.js';
import { findAgentInOrg, findOrg, hasActivePlan } from '../orgs/service.js';
import { findCall, insertCall, listCallsPage, lockCall, type CallListRow, type CallRow } from './queries.js';
import { countRecentByStatus, shiftStatusCount } from './status-count-queries.js';
import { deleteOldTimelineEntries, insertTimelineEntry, listTimeline } from './timeline-queries.js';
import { deleteExpiredIdempotencyKeys } from './idempotency-queries.js';
import { deleteInBatches } from '../database/batches.js';
import { holdFor, takeHold } from '../orgs/credits.js';
import { claimOrReplay, rememberResponse } from './idempotency.js';
import { advanceCall, endCall, hangUpCall, providerRef, withStatusCount } from './lifecycle.js';
import { toCallCreated } from './mapper.js';
import { CALL_STATUSES, isTerminal, type CallStatus } from './status.js';
import { DEFAULT_FROM_E164 } from '../orgs/service.js';

type Schemas = components['schemas'];

/** A call placement as the API received it. */
export interface PlaceCallRequest {
  auth: AuthContext;
  body: Schemas['CallCreate'];
  idempotencyKey: string | undefined;
}

/**
 * Runs the pre-call checks in the documented order, takes the hold, has the provider place the call
 * and stores it `queued`. Throws DomainError not_found (agent_id), forbidden, insufficient_credits or
 * upstream_error; on any error nothing is written.
 */
async function createQueuedCall(trx: Db, deps: AppDeps, request: PlaceCallRequest, now: Date): Promise<CallRow> {
  const { auth, body } = request;
  const agent = await findAgentInOrg(trx, auth.orgId, body.agent_id);
  if (!agent) throw notFound('agent', 'agent_id');
  // Read now, not from the key cache: a plan removed a moment ago stops placements at once.
  if (!(await hasActivePlan(trx, auth.orgId)))
    throw new DomainError('forbidden', 'The organisation has no active plan.');
  const org = await findOrg(trx, auth.orgId);
  if (!org) throw new Error(`the authenticated org ${auth.orgId} does not exist`);

  const id = randomUUID();
  const maxDurationSec = body.max_duration_sec ?? agent.max_duration_sec;
  const holdPaise = holdFor(maxDurationSec, agent.rate_paise_per_minute);
  if (!(await takeHold(trx, { orgId: auth.orgId, callId: id, paise: holdPaise }))) {
    const available = (await findOrg(trx, auth.orgId))?.balance_paise ?? 0;
    throw new DomainError(
      'insufficient_credits',
      `This call needs a hold of ${holdPaise} paise but only ${available} paise are available.`,
    );
  }

  const fromE164 = body.from_e164 ?? agent.from_e164 ?? org.default_from_e164 ?? DEFAULT_FROM_E164;
  const language = body.language ?? agent.language;
  let placed: { providerCallId: string; firstPollAt: Date };
  try {
    placed = await deps.provider.place({ callId: id, toE164: body.to_e164, fromE164, language, placedAt: now });
  } catch (error) {
    if (error instanceof ProviderRefusedError) throw new DomainError('upstream_error', error.message);
    throw error;
  }

  const call = await insertCall(trx, {
    id,
    org_id: auth.orgId,
    agent_id: agent.id,
    status: 'queued',
    from_e164: fromE164,
    to_e164: body.to_e164,
    language,
    max_duration_sec: maxDurationSec,
    rate_paise_per_minute: agent.rate_paise_per_minute,
    hold_paise: holdPaise,
    metadata: body.metadata ?? {},
    provider: deps.provider.name,
    provider_call_id: placed.providerCallId,
    // The progress worker has nothing to ask the provider before then.
    next_step_at: placed.firstPollAt,
    created_at: now,
  });
  await insertTimelineEntry(trx, { call_id: id, at: now, kind: 'status-changed', detail: { status: 'queued' } });
  await shiftStatusCount(trx, auth.orgId, null, 'queued'); // last, like every counter write (see withStatusCount)
  return call;
}

/**
 * Places a call (see createQueuedCall), or with an Idempotency-Key replays the response of the key's
 * first request. Throws what createQueuedCall throws, and DomainError idempotency_conflict.
 */
export async function placeCall(
  deps: AppDeps,
  request: PlaceCallRequest,
): Promise<{ call: Schemas['CallCreated']; replayed: boolean }> {
  const now = deps.clock.now();
  const { orgId } = request.auth;
  const key = request.idempotencyKey;
  const placed = await deps.db.transaction().execute(async (trx) => {
    if (key !== undefined) {
      const replay = await claimOrReplay(trx, { orgId, key, body: request.body, now });
      if (replay) return { call: replay, replayed: true };
    }
    const call = toCallCreated(await createQueuedCall(trx, deps, request, now));
    if (key !== undefined) await rememberResponse(trx, { orgId, key, response: call });
    return { call, replayed: false };
  });
  if (!placed.replayed) deps.metrics.callStatusChanges.inc({ from: 'none', to: 'queued' });
  return placed;
}

/** One page of the org's calls, newest first, and how many match in all (from the counters); a cursor must be a call of the org (else invalid_request). */
export async function listCalls(
  db: Db,
  orgId: string,
  page: { status: CallStatus | undefined; limit: number; start: PageStart },
): Promise<{ rows: CallListRow[]; total: number; more: boolean }> {
  const { start } = page;
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
 * (`completed`, connected seconds charged). The call is first brought up to date with its provider.
 * Events carry the request's `traceparent`. Throws DomainError not_found (param id), or invalid_state
 * when the call has already ended.
 */
export async function cancelCall(
  deps: AppDeps,
  orgId: string,
  id: string,
  traceparent: string | null,
): Promise<CallRow> {
  let from: CallStatus | null = null;
  const ended = await deps.db.transaction().execute(async (trx) => {
    const locked = await lockCall(trx, orgId, id);
    if (!locked) throw notFound('call');
    from = locked.status;
    const now = deps.clock.now();
    return withStatusCount(trx, locked, async (before) => {
      const call = isTerminal(before.status) ? before : await advanceCall(trx, deps.provider, before, now, traceparent);
      if (isTerminal(call.status)) {
        throw new DomainError('invalid_state', `The call has already ended (${call.status}) and cannot be canceled.`);
      }
      if (call.status === 'in_progress') return hangUpCall(trx, deps.provider, call, now, traceparent);
      await deps.provider.cancel(providerRef(call));
      return endCall(
        trx,
        call,
        { status: 'canceled', reason: 'canceled_by_client', at: now, conversation: null },
        traceparent,
      );
    });
  });
  deps.metrics.callStatusChanges.inc({ from: from ?? 'none', to: ended.status });
  return ended;
}

/**
 * Removes call history: timeline entries from before `timelineBefore` and Idempotency-Key records from
 * before `keysBefore`, in batches of `batchSize`. Returns the rows removed per table; database errors
 * propagate.
 */
export async function pruneCallHistory(
  db: Db,
  cutoffs: { timelineBefore: Date; keysBefore: Date },
  batchSize: number,
): Promise<{ call_timeline: number; call_idempotency_keys: number }> {
  return {
    call_timeline: await deleteInBatches(
      () => deleteOldTimelineEntries(db, cutoffs.timelineBefore, batchSize),
      batchSize,
    ),
    call_idempotency_keys: await deleteInBatches(
      () => deleteExpiredIdempotencyKeys(db, cutoffs.keysBefore, batchSize),
      batchSize,
    ),
  };
}
