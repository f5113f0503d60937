// Moves calls along the status chain inside the caller's transaction: applies provider-neutral events
// forward-only (the one place any provider's reports change a call), ends calls with their settlement,
// timeline and event, and keeps the per-status counters in step.
import type { Db } from '../database/connect.js';
import type { EventDataByKind, EventKind, PendingEvent } from '../webhooks/outbox.js';
import type { Conversation, ProviderCallRef, ProviderEnding, ProviderEvent } from './provider/types.js';
import type { CallChanges, CallRow } from './queries.js';
import { changeCall, countStatusChange, recordEvent, recordTimelineEntry, settleEndedCall } from './batched-writes.js';
import { chargeFor } from '../orgs/credits.js';
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
  return { callId: call.id, providerCallId: call.provider_call_id, toE164: call.to_e164, placedAt: call.created_at };
}

/** When a connected call reaches its max_duration_sec; null while it is not connected. */
export function hangUpDeadline(call: CallRow, secondMs: number): Date | null {
  if (call.status !== 'in_progress' || !call.started_at) return null;
  return new Date(call.started_at.getTime() + call.max_duration_sec * secondMs);
}

/** Moves a locked call from its status to `to`; throws when the chain forbids it or the row moved meanwhile. */
async function changeStatus(trx: Db, call: CallRow, to: CallStatus, changes: CallChanges): Promise<CallRow> {
  if (!canTransition(call.status, to)) throw new Error(`call ${call.id} cannot go from ${call.status} to ${to}`);
  const updated = await changeCall(trx, call, { ...changes, status: to });
  if (!updated) throw new Error(`call ${call.id} left ${call.status} while locked`);
  return updated;
}

/** Records a status change in the call's timeline. */
async function recordStatusChange(trx: Db, call: CallRow, at: Date): Promise<void> {
  await recordTimelineEntry(trx, {
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
  if (changed.status !== call.status) await countStatusChange(trx, call.org_id, call.status, changed.status);
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
    recordEvent(trx, call.org_id, { kind, data, traceparent: cause } as PendingEvent);
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
 * Ends a locked call: sets the outcome, writes the timeline, emits the status's event (with `cause`),
 * then releases the hold and charges the connected seconds, all in `trx` (run it inside withStatusCount).
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
  await recordStatusChange(trx, ended, ending.at);
  await emitEnding(trx, ended, cause);
  // Last: the org's row stays locked from here to the commit (a balance.low it causes follows the call's event).
  await settleEndedCall(trx, call.org_id, { callId: call.id, holdPaise: call.hold_paise, chargePaise: charge });
  return ended;
}

/** The statuses a call passes through before it ends, in order. */
const PROGRESS: readonly CallStatus[] = ['queued', 'dialing', 'ringing', 'in_progress'];

/** A status a provider reported a call reached, and when. */
interface StatusStep {
  status: CallStatus;
  at: Date;
}

/**
 * Moves a locked call forward through `steps` (each ahead of the one before, as statuses of the chain)
 * and every status between (a provider may skip reports), in one update, with a timeline entry for each
 * status passed at the time of the step that passed it; `started_at` is set on passing in_progress, to
 * `startedAt` when given, else to that step's time. `schedule`, given the call as it will stand, says
 * when it is next looked at (null: left as it is), set in the same update. No steps changes nothing.
 */
async function moveThrough(
  trx: Db,
  call: CallRow,
  steps: readonly StatusStep[],
  options: { startedAt?: Date; schedule?: (moved: CallRow) => Date | null } = {},
): Promise<CallRow> {
  const last = steps.at(-1);
  if (last === undefined) return call;
  const passed: StatusStep[] = [];
  let from = call.status;
  for (const step of steps) {
    for (const status of PROGRESS.slice(PROGRESS.indexOf(from) + 1, PROGRESS.indexOf(step.status) + 1)) {
      if (!canTransition(from, status)) throw new Error(`call ${call.id} cannot go from ${from} to ${status}`);
      passed.push({ status, at: step.at });
      from = status;
    }
  }
  const connected = passed.find((step) => step.status === 'in_progress');
  const startedAt = connected ? (options.startedAt ?? connected.at) : call.started_at;
  const changes: CallChanges = { status: last.status, ...(connected ? { started_at: startedAt } : {}) };
  const nextStepAt = options.schedule?.({ ...call, status: last.status, started_at: startedAt }) ?? null;
  if (nextStepAt !== null) changes.next_step_at = nextStepAt;
  const moved = await changeCall(trx, call, changes);
  if (!moved) throw new Error(`call ${call.id} left ${call.status} while locked`);
  for (const step of passed) await recordStatusChange(trx, { ...moved, status: step.status }, step.at);
  return moved;
}

/**
 * Moves a locked call forward to `to` through each status between, all passed at `at` (see moveThrough).
 * A status at or behind the call's own changes nothing.
 */
async function moveForward(trx: Db, call: CallRow, to: CallStatus, at: Date, startedAt: Date): Promise<CallRow> {
  if (PROGRESS.indexOf(to) <= PROGRESS.indexOf(call.status)) return call;
  return moveThrough(trx, call, [{ status: to, at }], { startedAt });
}

/** The status a call must have reached before it can end as `ending` says (failed may end it anywhere). */
function endsFrom(ending: ProviderEnding): CallStatus {
  if (ending.status === 'completed') return 'in_progress';
  if (ending.status === 'failed') return 'queued';
  return 'dialing';
}

/** Ends a locked call as its provider reports, filling in the statuses the reports skipped. */
async function applyEnding(trx: Db, call: CallRow, ending: ProviderEnding, at: Date, secondMs: number, cause: Cause) {
  const talkMs = (ending.conversation?.durationSec ?? 0) * secondMs;
  const reached = await moveForward(trx, call, endsFrom(ending), at, new Date(at.getTime() - talkMs));
  // A busy line or no answer after the contact picked up is not a move the chain has: the provider erred.
  const final: ProviderEnding = canTransition(reached.status, ending.status)
    ? ending
    : { status: 'failed', reason: 'provider_error', conversation: ending.conversation };
  return endCall(trx, reached, { ...final, at }, cause);
}

/**
 * Applies one provider event to a locked call (run it inside withStatusCount), forward-only: an ended
 * call ignores everything (no second end, no second event), a status at or behind the call's changes
 * nothing, and statuses a provider skipped are filled in. `secondMs` dates a completed call's start
 * when its connection was never reported. Returns the call as it now stands.
 */
async function applyProviderEvent(
  trx: Db,
  call: CallRow,
  event: ProviderEvent,
  secondMs: number,
  cause: Cause,
): Promise<CallRow> {
  if (isTerminal(call.status)) return call;
  switch (event.type) {
    case 'status':
      if (PROGRESS.indexOf(event.status) <= PROGRESS.indexOf(call.status)) return call;
      return moveForward(trx, call, event.status, event.at, event.at);
    case 'ended':
      return applyEnding(trx, call, event.ending, event.at, secondMs, cause);
    case 'disclosure-played':
      await recordTimelineEntry(trx, { call_id: call.id, at: event.at, kind: event.type, detail: event.detail });
      return call;
    case 'intent-detected':
      await recordTimelineEntry(trx, { call_id: call.id, at: event.at, kind: event.type, detail: event.detail });
      return call;
    case 'handoff-requested':
      await recordTimelineEntry(trx, { call_id: call.id, at: event.at, kind: event.type, detail: event.detail });
      return call;
  }
}

/**
 * Ends a locked call the platform stopped at `at` (run it inside withStatusCount): `canceled` before it
 * connected, else `completed` with what the provider reported, or with the seconds since it connected.
 */
export async function endStoppedCall(
  trx: Db,
  call: CallRow,
  stopped: { at: Date; conversation: Conversation | null; secondMs: number },
  cause: Cause,
): Promise<CallRow> {
  if (call.status !== 'in_progress') {
    return endCall(
      trx,
      call,
      { status: 'canceled', reason: 'canceled_by_client', at: stopped.at, conversation: null },
      cause,
    );
  }
  const connectedSec = Math.max(0, Math.floor((stopped.at.getTime() - call.started_at!.getTime()) / stopped.secondMs));
  const conversation = stopped.conversation ?? {
    durationSec: connectedSec,
    recordingUrl: null,
    transcript: [],
    analysis: { intent: null, sentiment: null, outcome: null },
  };
  return endCall(trx, call, { status: 'completed', reason: null, at: stopped.at, conversation }, cause);
}

/**
 * Applies a locked call's provider events in order (run it inside withStatusCount), as applyProviderEvent
 * would one after another, except that a run of status reports moves the call's row once (moveThrough).
 * With `cutAtDeadline`, stops at the first event later than the deadline the call has by then (a
 * connected call's max_duration_sec). `schedule` (see moveThrough) goes with the run that is the call's
 * last row change, if one is. Returns the call as it now stands.
 */
export async function applyProviderEvents(
  trx: Db,
  call: CallRow,
  events: readonly ProviderEvent[],
  options: { secondMs: number; cause: Cause; cutAtDeadline: boolean; schedule?: (call: CallRow) => Date | null },
): Promise<CallRow> {
  const pastDeadline = (status: CallStatus, startedAt: Date | null, at: Date) =>
    options.cutAtDeadline &&
    status === 'in_progress' &&
    startedAt !== null &&
    at.getTime() > startedAt.getTime() + call.max_duration_sec * options.secondMs;
  const { schedule } = options;
  let moved = call;
  let index = 0;
  while (index < events.length) {
    const event = events[index]!;
    if (pastDeadline(moved.status, moved.started_at, event.at)) return moved;
    if (event.type !== 'status' || isTerminal(moved.status)) {
      moved = await applyProviderEvent(trx, moved, event, options.secondMs, options.cause);
      index += 1;
      continue;
    }
    const steps: StatusStep[] = [];
    let reached = moved.status;
    let startedAt = moved.started_at;
    for (; index < events.length; index += 1) {
      const next = events[index]!;
      if (next.type !== 'status') break;
      if (pastDeadline(reached, startedAt, next.at)) return moveThrough(trx, moved, steps, { schedule });
      if (PROGRESS.indexOf(next.status) <= PROGRESS.indexOf(reached)) continue;
      if (next.status === 'in_progress') startedAt = next.at;
      steps.push({ status: next.status, at: next.at });
      reached = next.status;
    }
    // The call's last row change when no later report moves or ends it: its next look goes in with it.
    const last = !events.slice(index).some((later) => later.type === 'status' || later.type === 'ended');
    moved = await moveThrough(trx, moved, steps, last ? { schedule } : {});
  }
  return moved;
}

/** Sets when a locked, unfinished call is next looked at (its provider's news, its deadline). */
export async function scheduleCall(trx: Db, call: CallRow, nextStepAt: Date): Promise<CallRow> {
  const scheduled = await changeCall(trx, call, { next_step_at: nextStepAt });
  if (!scheduled) throw new Error(`call ${call.id} left ${call.status} while locked`);
  return scheduled;
}
