// Moves calls along the status chain inside the caller's transaction: applies provider progress,
// enforces max_duration_sec, ends calls with their settlement, timeline and event, and keeps the
// per-status counters in step.
import type { Db } from '../database/connect.js';
import { emitEvent, type EventDataByKind, type EventKind } from '../webhooks/outbox.js';
import type { Conversation, ProviderCallRef, ProviderEvent, VoiceProvider } from './provider/types.js';
import { updateCallInStatus, type CallChanges, type CallRow } from './queries.js';
import { shiftStatusCount } from './status-count-queries.js';
import { insertTimelineEntry } from './timeline-queries.js';
import { chargeFor, settleCall } from '../orgs/credits.js';
import { canTransition, isTerminal, type CallStatus, type TerminalStatus } from './status.js';

/** How a call ends. */
export interface CallEnding {
  status: TerminalStatus;
  reason: CallRow['reason'];
  at: Date;
  conversation: Conversation | null;
}

/** The traceparent of the request that moves a call (null for the progress worker), kept with its events. */
export type Cause = string | null;

/** What the provider needs to know about a stored call. */
export function providerRef(call: CallRow): ProviderCallRef {
  return { providerCallId: call.provider_call_id, toE164: call.to_e164, placedAt: call.created_at };
}

/** When a connected call reaches its max_duration_sec; null while it is not connected. */
function hangUpDeadline(call: CallRow, secondMs: number): Date | null {
  if (call.status !== 'in_progress' || !call.started_at) return null;
  return new Date(call.started_at.getTime() + call.max_duration_sec * secondMs);
}

/** Moves a locked call from its status to `to`; throws when the chain forbids it or the row moved meanwhile. */
async function changeStatus(trx: Db, call: CallRow, to: CallStatus, changes: CallChanges): Promise<CallRow> {
  if (!canTransition(call.status, to)) throw new Error(`call ${call.id} cannot go from ${call.status} to ${to}`);
  const updated = await updateCallInStatus(trx, call.id, call.status, { ...changes, status: to });
  if (!updated) throw new Error(`call ${call.id} left ${call.status} while locked`);
  return updated;
}

/** Records a status change in the call's timeline. */
async function recordStatusChange(trx: Db, call: CallRow, at: Date): Promise<void> {
  await insertTimelineEntry(trx, {
    call_id: call.id,
    at,
    kind: 'status-changed',
    detail: call.reason === null ? { status: call.status } : { status: call.status, reason: call.reason },
  });
}

/**
 * Runs `change` on a locked call, then moves the org's status counters once, from the status before
 * to the status after. Counters are written last and in a fixed order, so transactions always lock
 * call row, then org row (credits), then counter rows, and never deadlock on them. Rethrows `change`'s errors.
 */
export async function withStatusCount(
  trx: Db,
  call: CallRow,
  change: (call: CallRow) => Promise<CallRow>,
): Promise<CallRow> {
  const changed = await change(call);
  if (changed.status !== call.status) await shiftStatusCount(trx, call.org_id, call.status, changed.status);
  return changed;
}

/** The call's reason when it is one of `allowed` (the ones its event kind publishes), else null. */
function reasonIn<R extends string>(call: CallRow, allowed: readonly R[]): R | null {
  return call.reason !== null && (allowed as readonly string[]).includes(call.reason) ? (call.reason as R) : null;
}

const FAILURE_REASONS = ['carrier_rejected', 'provider_error', 'timeout'] as const;

/** Emits the event of an ended call with the payload its kind publishes. */
async function emitEnding(trx: Db, call: CallRow, cause: Cause): Promise<void> {
  const base = { call_id: call.id, provider_call_id: call.provider_call_id };
  const emit = <K extends EventKind>(kind: K, data: EventDataByKind[K]) =>
    emitEvent(trx, call.org_id, kind, data, cause);
  switch (call.status) {
    case 'completed':
      await emit('call.completed', {
        ...base,
        status: 'completed',
        duration_sec: call.duration_sec ?? 0,
        recording_url: call.recording_url,
      });
      return;
    case 'failed':
      await emit('call.failed', { ...base, status: 'failed', reason: reasonIn(call, FAILURE_REASONS) });
      return;
    case 'no_answer':
      await emit('call.no_answer', { ...base, status: 'no_answer', reason: reasonIn(call, ['no_answer']) });
      return;
    case 'busy':
      await emit('call.busy', { ...base, status: 'busy', reason: reasonIn(call, ['busy']) });
      return;
    case 'canceled':
      await emit('call.canceled', { ...base, status: 'canceled', reason: reasonIn(call, ['canceled_by_client']) });
      return;
    case 'queued':
    case 'dialing':
    case 'ringing':
    case 'in_progress':
      throw new Error(`call ${call.id} has not ended (${call.status})`);
  }
}

/**
 * Ends a locked call: sets the outcome, releases the hold and charges the connected seconds, writes
 * the timeline and emits the status's event (with `cause`), all in `trx` (run it inside withStatusCount).
 * Throws on a forbidden move.
 */
export async function endCall(trx: Db, call: CallRow, ending: CallEnding, cause: Cause): Promise<CallRow> {
  const talk = ending.conversation;
  const durationSec = talk?.durationSec ?? null;
  const charge = chargeFor(durationSec, call.rate_paise_per_minute, call.hold_paise);
  const ended = await changeStatus(trx, call, ending.status, {
    reason: ending.reason,
    ended_at: ending.at,
    next_step_at: null,
    duration_sec: durationSec,
    credits_debited_paise: charge,
    recording_url: talk?.recordingUrl ?? null,
    transcript: talk?.transcript ?? null,
    llm_extracted_intent: talk?.analysis.intent ?? null,
    llm_sentiment: talk?.analysis.sentiment ?? null,
    llm_outcome: talk?.analysis.outcome ?? null,
  });
  await settleCall(trx, { orgId: call.org_id, callId: call.id, holdPaise: call.hold_paise, chargePaise: charge });
  await recordStatusChange(trx, ended, ending.at);
  await emitEnding(trx, ended, cause);
  return ended;
}

/** Hangs up a connected, locked call at `at` and ends it `completed` with what it produced. */
export async function hangUpCall(
  trx: Db,
  provider: VoiceProvider,
  call: CallRow,
  at: Date,
  cause: Cause,
): Promise<CallRow> {
  const conversation = await provider.hangUp(providerRef(call), at);
  return endCall(trx, call, { status: 'completed', reason: null, at, conversation }, cause);
}

async function applyEvent(trx: Db, call: CallRow, event: ProviderEvent, cause: Cause): Promise<CallRow> {
  switch (event.type) {
    case 'status': {
      const changes = event.status === 'in_progress' ? { started_at: event.at } : {};
      const moved = await changeStatus(trx, call, event.status, changes);
      await recordStatusChange(trx, moved, event.at);
      return moved;
    }
    case 'ended':
      return endCall(trx, call, { ...event.ending, at: event.at }, cause);
    case 'disclosure-played':
      await insertTimelineEntry(trx, { call_id: call.id, at: event.at, kind: event.type, detail: event.detail });
      return call;
    case 'intent-detected':
      await insertTimelineEntry(trx, { call_id: call.id, at: event.at, kind: event.type, detail: event.detail });
      return call;
    case 'handoff-requested':
      await insertTimelineEntry(trx, { call_id: call.id, at: event.at, kind: event.type, detail: event.detail });
      return call;
  }
}

/**
 * Brings a locked, unfinished call up to `now` (run it inside withStatusCount): applies the provider's
 * events in order, hangs it up at its max_duration_sec deadline, and schedules its next step; events
 * it emits carry `cause`. Throws on provider or database errors.
 */
export async function advanceCall(
  trx: Db,
  provider: VoiceProvider,
  call: CallRow,
  now: Date,
  cause: Cause,
): Promise<CallRow> {
  const progress = await provider.poll(providerRef(call), call.progress_cursor, now);
  let current = call;
  let cursor = call.progress_cursor;
  for (const event of progress.events) {
    const deadline = hangUpDeadline(current, provider.secondMs);
    if (deadline && event.at > deadline) break;
    current = await applyEvent(trx, current, event, cause);
    cursor += 1;
    if (isTerminal(current.status)) return current;
  }
  const deadline = hangUpDeadline(current, provider.secondMs);
  if (deadline && deadline <= now) return hangUpCall(trx, provider, current, deadline, cause);
  const candidates = [progress.nextAt, deadline].filter((at): at is Date => at !== null);
  const nextStepAt = candidates.length > 0 ? new Date(Math.min(...candidates.map((at) => at.getTime()))) : null;
  const scheduled = await updateCallInStatus(trx, current.id, current.status, {
    progress_cursor: cursor,
    next_step_at: nextStepAt,
  });
  if (!scheduled) throw new Error(`call ${current.id} left ${current.status} while locked`);
  return scheduled;
}
