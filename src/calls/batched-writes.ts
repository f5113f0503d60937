// The writes a call's change makes that a batch of changes can make once: the calls' own rows, the
// rows their whole org shares (the per-status counters, and the balance when a call ends), the calls'
// timeline rows and their events. Every change of every call of an org locks the org's rows until its
// commit, so they serialise an org's calls. A batch of call changes in one transaction (the progress
// worker's, a group of placements the provider took) defers these writes: each is recorded here, and at
// the batch's end the calls' rows go in one statement (each call locked by the batch, changed in memory
// until then), with one more that settles the campaign attempts of the calls that ended, the timeline
// rows in one, each org's events in one (and their deliveries in another),
// and each org's rows get one counter statement and one balance movement. Outside a batch each is
// written at once.
import type { Db } from '../database/connect.js';
import { settleCalls, type CallSettlement } from '../orgs/credits.js';
import { emitOrgEvents, type PendingEvent } from '../webhooks/outbox.js';
import { shiftStatusCounts } from './status-count-queries.js';
import { isTerminal, type CallStatus } from './status.js';
import { settleAttemptsOfEndedCalls } from '../campaigns/attempts.js';
import { insertTimelineEntries, type TimelineInsert } from './timeline-queries.js';
import { updateCallInStatus, writeCallRows, type CallChanges, type CallRow, type CallRowWrite } from './queries.js';

/** What one org's calls of a batch have moved so far. */
interface OrgShare {
  counts: Map<CallStatus, number>;
  settlements: CallSettlement[];
  events: PendingEvent[];
}

/** What a batch has deferred: the calls' rows, each org's share, and the timeline rows in the order they were made. */
interface Batch {
  calls: Map<string, CallRowWrite>;
  orgs: Map<string, OrgShare>;
  timeline: TimelineInsert[];
}

/** The open batches, by the transaction they write in. */
const batches = new WeakMap<Db, Batch>();

/** The org's share of the batch open in `trx`, or undefined when none is open. */
function shareOf(trx: Db, orgId: string): OrgShare | undefined {
  const batch = batches.get(trx);
  if (!batch) return undefined;
  let share = batch.orgs.get(orgId);
  if (!share) {
    share = { counts: new Map(), settlements: [], events: [] };
    batch.orgs.set(orgId, share);
  }
  return share;
}

/**
 * Applies `changes` to a call this transaction holds locked, while it is still in the status `call` has
 * (see updateCallInStatus); returns the call as it then stands, undefined when it is in another status.
 */
export async function changeCall(trx: Db, call: CallRow, changes: CallChanges): Promise<CallRow | undefined> {
  const batch = batches.get(trx);
  if (!batch) return updateCallInStatus(trx, call.id, call.status, changes);
  const pending = batch.calls.get(call.id);
  if (pending && pending.row.status !== call.status) return undefined;
  const given = Object.entries(changes).filter(([, value]) => value !== undefined) as Array<
    [keyof CallChanges, unknown]
  >;
  const row: CallRow = { ...(pending?.row ?? call), ...Object.fromEntries(given) };
  const columns = new Set([...(pending?.columns ?? []), ...given.map(([column]) => column)]);
  batch.calls.set(call.id, { expected: pending?.expected ?? call.status, row, columns });
  return row;
}

/** Appends an entry to a call's timeline. */
export async function recordTimelineEntry(trx: Db, entry: TimelineInsert): Promise<void> {
  const batch = batches.get(trx);
  if (!batch) return insertTimelineEntries(trx, [entry]);
  batch.timeline.push(entry);
}

/** Records an event of the org (see emitOrgEvents). */
export async function recordEvent(trx: Db, orgId: string, event: PendingEvent): Promise<void> {
  const share = shareOf(trx, orgId);
  if (!share) {
    await emitOrgEvents(trx, orgId, [event]);
    return;
  }
  share.events.push(event);
}

/** Moves one call of the org from `from` (null for a new call) to `to` in the status counters. */
export async function countStatusChange(trx: Db, orgId: string, from: CallStatus | null, to: CallStatus) {
  const deltas = new Map<CallStatus, number>([[to, 1]]);
  if (from !== null) deltas.set(from, -1);
  const share = shareOf(trx, orgId);
  if (!share) return shiftStatusCounts(trx, orgId, deltas);
  for (const [status, delta] of deltas) share.counts.set(status, (share.counts.get(status) ?? 0) + delta);
}

/** Gives an ended call's hold back and takes its charge (see settleCalls). */
export async function settleEndedCall(trx: Db, orgId: string, settlement: CallSettlement) {
  const share = shareOf(trx, orgId);
  if (!share) return settleCalls(trx, orgId, [settlement]);
  share.settlements.push(settlement);
}

/**
 * Runs `changes` in `trx` with the writes above deferred, then writes them: the calls' rows (and the
 * attempts of the campaign calls that ended, see settleAttemptsOfEndedCalls), the timeline rows, then per
 * org (in id order, so concurrent batches lock orgs alike) the events, the settlements (an event they
 * cause follows the calls'), then the counters, the lock order of a single change (call rows, org row,
 * counter rows). Throws what `changes` or the writes throw.
 */
export async function withWritesBatched<T>(trx: Db, changes: () => Promise<T>): Promise<T> {
  if (batches.has(trx)) throw new Error('a batch of writes is already open in this transaction');
  const batch: Batch = { calls: new Map(), orgs: new Map(), timeline: [] };
  batches.set(trx, batch);
  try {
    const result = await changes();
    const written = [...batch.calls.values()];
    await writeCallRows(trx, written);
    await settleAttemptsOfEndedCalls(
      trx,
      written.flatMap(({ row }) => (row.campaign_id !== null && isTerminal(row.status) ? [row.id] : [])),
    );
    await insertTimelineEntries(trx, batch.timeline);
    const orgs = [...batch.orgs].sort(([a], [b]) => a.localeCompare(b));
    for (const [orgId, share] of orgs) await emitOrgEvents(trx, orgId, share.events);
    for (const [orgId, share] of orgs) await settleCalls(trx, orgId, share.settlements);
    for (const [orgId, share] of orgs) await shiftStatusCounts(trx, orgId, share.counts);
    return result;
  } finally {
    batches.delete(trx);
  }
}
