// SQL for the call counters that keep list totals cheap: per org and status (written here), and per
// campaign and ending status (written by a trigger, see migration 035).
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import type { CallStatusCountsTable } from '../../db/schema.js';
import { CALL_STATUSES, isTerminal } from './status.js';

type CallStatus = CallStatusCountsTable['status'];

/**
 * Moves the org's counters by `deltas` (status to change), in one statement: it is the last a change
 * of calls makes before its commit, so the org's counter rows stay locked for as little as possible.
 * Rows are touched in status order so concurrent transactions always lock them in the same order. A
 * missing row is created with the delta, or 0 for a negative one (the table refuses a negative count).
 */
export async function shiftStatusCounts(db: Db, orgId: string, deltas: ReadonlyMap<CallStatus, number>): Promise<void> {
  const moves = [...deltas].filter(([, delta]) => delta !== 0).sort(([a], [b]) => a.localeCompare(b));
  if (moves.length === 0) return;
  const deltaOf = sql.join(
    moves.map(([status, delta]) => sql`WHEN ${status} THEN ${delta}::bigint`),
    sql` `,
  );
  await db
    .insertInto('call_status_counts')
    .values(moves.map(([status, delta]) => ({ org_id: orgId, status, count: Math.max(delta, 0) })))
    .onConflict((oc) =>
      oc
        .columns(['org_id', 'status'])
        .doUpdateSet({ count: sql`call_status_counts.count + CASE excluded.status ${deltaOf} END` }),
    )
    .execute();
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

/** The statuses of a call not yet ended, as SQL literals. */
const NOT_ENDED = sql.join(CALL_STATUSES.filter((status) => !isTerminal(status)).map((status) => sql.lit(status)));

/**
 * The query of how many of the campaign's calls are in `status`, or in any status when it is undefined:
 * one row with `total`. Ended calls come from the campaign's counters; calls not yet ended (no more than
 * the campaign's max_concurrency) are counted along calls_campaign_status_created_idx. With an ending
 * `status`, the second count is skipped without reading an index entry (its condition on the argument
 * alone is checked once). Lists read it in the statement that reads their page (see listCallsPage).
 */
export function campaignCallTotal(db: Db, campaignId: string, status: CallStatus | undefined) {
  const ended = db
    .selectFrom('campaign_call_counts')
    .select(sql<number>`coalesce(sum(count), 0)`.as('ended'))
    .where('campaign_id', '=', campaignId)
    .$if(status !== undefined, (query) => query.where('status', '=', status!));
  const notEnded = db
    .selectFrom('calls')
    .select(sql<number>`count(*)`.as('not_ended'))
    .where('campaign_id', '=', campaignId)
    .$if(status === undefined, (query) => query.where(sql<boolean>`status IN (${NOT_ENDED})`))
    .$if(status !== undefined, (query) =>
      query.where('status', '=', status!).where(sql<boolean>`${status}::text IN (${NOT_ENDED})`),
    );
  return db.selectNoFrom(sql<number>`(${ended}) + (${notEnded})`.as('total'));
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
