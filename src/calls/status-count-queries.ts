// SQL for the per-org per-status call counters that keep list totals O(1).
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import { prepareQuery, type Arg } from '../database/prepared-query.js';
import type { CallStatusCountsTable } from '../../db/schema.js';

type CallStatus = CallStatusCountsTable['status'];

/**
 * Moves one call of an org from status `from` (null for a new call) to `to`. Rows are touched in
 * status order so concurrent transactions always lock them in the same order.
 */
export async function shiftStatusCount(db: Db, orgId: string, from: CallStatus | null, to: CallStatus): Promise<void> {
  const deltas = [{ status: to, delta: 1 }];
  if (from !== null) deltas.push({ status: from, delta: -1 });
  deltas.sort((a, b) => a.status.localeCompare(b.status));
  for (const { status, delta } of deltas) {
    if (delta > 0) {
      await db
        .insertInto('call_status_counts')
        .values({ org_id: orgId, status, count: 1 })
        .onConflict((oc) => oc.columns(['org_id', 'status']).doUpdateSet({ count: sql`call_status_counts.count + 1` }))
        .execute();
    } else {
      await db
        .updateTable('call_status_counts')
        .set({ count: sql`count - 1` })
        .where('org_id', '=', orgId)
        .where('status', '=', status)
        .execute();
    }
  }
}

/** How many of the org's calls are in `status`, or in any status when it is undefined. */
export async function countCalls(db: Db, orgId: string, status: CallStatus | undefined): Promise<number> {
  const [row] =
    status === undefined
      ? await callCount.execute(db, { orgId })
      : await callCountInStatus.execute(db, { orgId, status });
  return Number(row!.total);
}

const callCount = prepareQuery((db, arg: Arg<{ orgId: string }>) =>
  db
    .selectFrom('call_status_counts')
    .select(sql<number>`coalesce(sum(count), 0)`.as('total'))
    .where('org_id', '=', arg('orgId')),
);

const callCountInStatus = prepareQuery((db, arg: Arg<{ orgId: string; status: CallStatus }>) =>
  db
    .selectFrom('call_status_counts')
    .select(sql<number>`coalesce(sum(count), 0)`.as('total'))
    .where('org_id', '=', arg('orgId'))
    .where('status', '=', arg('status')),
);
