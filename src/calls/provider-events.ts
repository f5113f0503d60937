// Provider reports, whatever their source (a verified webhook, a lookup, the simulator's script): each
// is stored once under its key, tied to its call by our id or the provider's, and applied through the
// lifecycle; a report for a call still being placed waits and is applied when the placement records it.
import type { Db } from '../database/connect.js';
import type { Logger } from 'pino';
import type { InboundEvent, VoiceProvider } from './provider/types.js';
import { lockProviderCall, type CallRow } from './queries.js';
import { lockPlacement } from './placement-queries.js';
import {
  insertProviderEvents,
  lockProviderCallIds,
  markProviderEventsApplied,
  storedEvent,
  waitingProviderEvents,
} from './provider-event-queries.js';
import { applyProviderEvents, withStatusCount, type Cause } from './lifecycle.js';
import type { CallStatus } from './status.js';

/** What became of one report: applied to its call, a duplicate, waiting for its placement, or for no known call. */
export type ReportResult = 'accepted' | 'duplicate' | 'held' | 'unknown_call';

/** A call one batch of reports moved, before and after (for the status metrics and the next schedule). */
export interface CallMove {
  from: CallStatus;
  call: CallRow;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The report's ids, our call id dropped when it is not one we could have made. */
function idsOf(event: InboundEvent) {
  return {
    callId: event.callId !== null && UUID.test(event.callId) ? event.callId : null,
    providerCallId: event.providerCallId,
  };
}

/** Whether a report's ids agree with `call`: neither names something else (an id it lacks is no conflict). */
function namesCall(call: { id: string; provider_call_id: string | null }, ids: ReturnType<typeof idsOf>): boolean {
  if (ids.callId !== null && ids.callId !== call.id) return false;
  return ids.providerCallId === null || call.provider_call_id === null || ids.providerCallId === call.provider_call_id;
}

/**
 * Finds and locks the call a report names, or tells that it waits for a placement or names no known
 * call. The caller holds the provider call id's lock already, so a placement recording that id (which
 * takes the same lock) either finished before or sees this report held.
 */
async function target(trx: Db, provider: string, event: InboundEvent): Promise<CallRow | 'held' | 'unknown_call'> {
  const ids = idsOf(event);
  const call = await lockProviderCall(trx, provider, ids);
  if (call) return namesCall(call, ids) ? call : 'unknown_call';
  if (ids.callId === null) return 'unknown_call';
  // Waiting on the placement's lock means its second transaction finished: look for the call again.
  if (await lockPlacement(trx, ids.callId)) return 'held';
  const placed = await lockProviderCall(trx, provider, ids);
  return placed && namesCall(placed, ids) ? placed : 'unknown_call';
}

/** A call the caller has locked, and what the provider reported of it. */
export interface LockedCallReports {
  provider: VoiceProvider;
  call: CallRow;
  events: readonly InboundEvent[];
}

/**
 * Stores, in one statement per provider, the reports naming calls the caller has locked, as applied to
 * them at `now`; returns the new rows' ids by key, as insertProviderEvents does, to be handed to
 * ingestReports (`locked.stored`) for each of those calls. Reports naming another call are left out.
 */
export async function storeLockedCallReports(
  trx: Db,
  lookups: readonly LockedCallReports[],
  now: Date,
): Promise<Map<string, number>> {
  const byProvider = new Map<string, Array<{ event: InboundEvent; appliedTo: string }>>();
  for (const { provider, call, events } of lookups) {
    const reports = byProvider.get(provider.name) ?? [];
    for (const reported of events) {
      const event = { ...reported, ...idsOf(reported) };
      if (namesCall(call, event)) reports.push({ event, appliedTo: call.id });
    }
    byProvider.set(provider.name, reports);
  }
  const stored = new Map<string, number>();
  for (const [provider, reports] of byProvider) {
    for (const [key, id] of await insertProviderEvents(trx, provider, reports, now)) stored.set(key, id);
  }
  return stored;
}

/**
 * Stores `events` of `provider` once each and applies those naming a known call, in order, in `trx`
 * (events it emits carry `cause`); returns each report's result and the calls moved. Reports for calls
 * not (yet) known are kept, waiting. With `cutAtDeadline`, a connected call takes no report dated after
 * its max_duration_sec (the caller hangs it up at that moment). `locked` is a call the caller has locked
 * already: reports naming it are stored as applied to it, without looking it up again (or were stored
 * so by storeLockedCallReports, which returned `stored`); its `schedule` goes with the reports' last
 * change to its row (see applyProviderEvents).
 */
export async function ingestReports(
  trx: Db,
  provider: VoiceProvider,
  events: readonly InboundEvent[],
  options: {
    now: Date;
    cause: Cause;
    cutAtDeadline: boolean;
    locked?: { call: CallRow; schedule: (call: CallRow) => Date | null; stored?: ReadonlyMap<string, number> };
  },
): Promise<{ results: ReportResult[]; moves: CallMove[] }> {
  const { now, cause } = options;
  const locked = options.locked?.call;
  const lockedSchedule = options.locked?.schedule;
  const reports = events.map((reported) => {
    const event = { ...reported, ...idsOf(reported) };
    return { event, appliedTo: locked && namesCall(locked, event) ? locked.id : null };
  });
  // The provider call ids' locks (see target) all at once and in sorted order, as a placement group takes
  // its own, so two transactions that lock several never deadlock on them; the call the caller has locked
  // needs none.
  await lockProviderCallIds(
    trx,
    provider.name,
    reports.flatMap(({ event, appliedTo }) =>
      appliedTo === null && event.providerCallId !== null ? [event.providerCallId] : [],
    ),
  );
  const storedAhead = options.locked?.stored;
  const stored = await insertProviderEvents(
    trx,
    provider.name,
    storedAhead ? reports.filter(({ appliedTo }) => appliedTo === null) : reports,
    now,
  );
  if (storedAhead) {
    for (const { event, appliedTo } of reports) {
      const id = storedAhead.get(event.dedupeKey);
      if (appliedTo !== null && id !== undefined && !stored.has(event.dedupeKey)) stored.set(event.dedupeKey, id);
    }
  }
  const results: ReportResult[] = [];
  const byCall = new Map<string, { call: CallRow; reports: Array<{ id: number; event: InboundEvent }> }>();
  if (locked) byCall.set(locked.id, { call: locked, reports: [] });
  const unmarked: Array<{ id: number; callId: string }> = [];
  for (const { event, appliedTo } of reports) {
    const id = stored.get(event.dedupeKey);
    stored.delete(event.dedupeKey);
    if (id === undefined) {
      results.push('duplicate');
      continue;
    }
    const cached = appliedTo === null ? byCall.get(event.callId ?? '')?.call : locked;
    const found = cached && namesCall(cached, event) ? cached : await target(trx, provider.name, event);
    if (typeof found === 'string') {
      results.push(found);
      continue;
    }
    results.push('accepted');
    const entry = byCall.get(found.id) ?? { call: found, reports: [] };
    entry.reports.push({ id, event });
    byCall.set(found.id, entry);
    if (appliedTo === null) unmarked.push({ id, callId: found.id });
  }
  const moves: CallMove[] = [];
  for (const { call, reports: applied } of byCall.values()) {
    if (applied.length === 0) continue;
    // Before the changes: the org's rows they lock (credits, counters) are then held for less.
    await markProviderEventsApplied(
      trx,
      unmarked.filter((report) => report.callId === call.id).map((report) => report.id),
      call.id,
      now,
    );
    const after = await withStatusCount(trx, call, (current) =>
      applyProviderEvents(
        trx,
        current,
        applied.map(({ event }) => event.event),
        {
          secondMs: provider.secondMs,
          cause,
          cutAtDeadline: options.cutAtDeadline,
          ...(call.id === locked?.id && lockedSchedule ? { schedule: lockedSchedule } : {}),
        },
      ),
    );
    moves.push({ from: call.status, call: after });
  }
  return { results, moves };
}

/**
 * Applies, in `trx`, the reports that waited for calls their placements have just recorded (after the
 * provider call ids' locks; the caller moves the status counters); returns the calls as they then
 * stand, in the order given. One statement reads the reports of all of them.
 */
export async function applyWaitingReports(
  trx: Db,
  provider: VoiceProvider,
  calls: readonly CallRow[],
  now: Date,
): Promise<CallRow[]> {
  const named = await waitingProviderEvents(
    trx,
    provider.name,
    calls.map((call) => ({ id: call.id, providerCallId: call.provider_call_id })),
  );
  const after: CallRow[] = [];
  for (const call of calls) {
    const waiting = named.filter((row) =>
      namesCall(call, { callId: row.call_id, providerCallId: row.provider_call_id }),
    );
    const current = await applyProviderEvents(trx, call, waiting.map(storedEvent), {
      secondMs: provider.secondMs,
      cause: null,
      cutAtDeadline: false,
    });
    await markProviderEventsApplied(
      trx,
      waiting.map((row) => row.id),
      call.id,
      now,
    );
    after.push(current);
  }
  return after;
}

/** Logs a report for no known call: enough to find it, no phone number. */
export function logUnknownCall(logger: Logger, provider: string, event: InboundEvent): void {
  logger.warn(
    { provider, dedupeKey: event.dedupeKey, callId: event.callId, providerCallId: event.providerCallId },
    'a provider reported on a call this service does not know; acknowledged and kept',
  );
}
