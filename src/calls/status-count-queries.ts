// SQL for the per-org per-status call counters that keep list totals O(1).
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
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

/**
 * The query of how many of the org's calls are in `status`, or in any status when it is undefined: one
 * row with `total`. Lists read it in the statement that reads their page (see listCallsPage).
 */
export function callTotal(db: Db, orgId: string, status: CallStatus | undefined) {
  const query = db
    .selectFrom('call_status_counts')
    .select(sql<number>`coalesce(sum(count), 0)`.as('total'))
    .where('org_id', '=', orgId);
  return status === undefined ? query : query.where('status', '=', status);
}

/**
 * How many of the org's calls in each of `statuses` were created since `since`, each counted up to
 * `cap` (the dashboard's overview; bounded so an org with millions of calls costs no more than a small
 * one). One statement: a capped index range per status.
 */
export async function countRecentByStatus(
  db: Db,
  orgId: string,
  statuses: readonly CallStatus[],
  since: Date,
  cap: number,
): Promise<Array<{ status: CallStatus; count: number }>> {
  const { rows } = await sql<{ status: CallStatus; count: number }>`
    SELECT s.status, (
      SELECT count(*)::int FROM (
        SELECT 1 FROM calls
        WHERE org_id = ${orgId} AND status = s.status AND created_at > ${since}
        LIMIT ${cap}
      ) AS capped
    ) AS count
    FROM unnest(${statuses}::text[]) WITH ORDINALITY AS s(status, position)
    ORDER BY s.position`.execute(db);
  return rows;
}
