// The writes a call's change makes on rows its whole org shares: the per-status counters and the
// balance (a call's settlement). Every change of every call of an org locks those rows until its commit,
// so they serialise an org's calls. A batch of call changes in one transaction (the progress worker's)
// defers them: each is recorded here and all are written once, at the batch's end, one counter statement
// and one balance movement per org. Outside a batch they are written at once.
import type { Db } from '../database/connect.js';
import { settleCalls, type CallSettlement } from '../orgs/credits.js';
import { shiftStatusCounts } from './status-count-queries.js';
import type { CallStatus } from './status.js';

/** What one org's calls of a batch have moved so far. */
interface OrgShare {
  counts: Map<CallStatus, number>;
  settlements: CallSettlement[];
}

/** The open batches, by the transaction they write in. */
const batches = new WeakMap<Db, Map<string, OrgShare>>();

/** The org's share of the batch open in `trx`, or undefined when none is open. */
function shareOf(trx: Db, orgId: string): OrgShare | undefined {
  const batch = batches.get(trx);
  if (!batch) return undefined;
  let share = batch.get(orgId);
  if (!share) {
    share = { counts: new Map(), settlements: [] };
    batch.set(orgId, share);
  }
  return share;
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
 * Runs `changes` in `trx` with the org-wide writes deferred, then writes them: per org (in id order,
 * so concurrent batches lock orgs alike), the settlements, then the counters, the lock order of a single
 * change (call rows, org row, counter rows). Throws what `changes` or the writes throw.
 */
export async function withOrgWritesBatched<T>(trx: Db, changes: () => Promise<T>): Promise<T> {
  if (batches.has(trx)) throw new Error('a batch of org writes is already open in this transaction');
  const batch = new Map<string, OrgShare>();
  batches.set(trx, batch);
  try {
    const result = await changes();
    for (const [orgId, share] of [...batch].sort(([a], [b]) => a.localeCompare(b))) {
      await settleCalls(trx, orgId, share.settlements);
    }
    for (const [orgId, share] of [...batch].sort(([a], [b]) => a.localeCompare(b))) {
      await shiftStatusCounts(trx, orgId, share.counts);
    }
    return result;
  } finally {
    batches.delete(trx);
  }
}
