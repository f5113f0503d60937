// SQL for the org-wide concurrency cap: the plan's cap read under the org's row lock, and the count of
// the org's calls in progress.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import { CALL_STATUSES, isTerminal } from './status.js';

/** The statuses of a call that has not ended. */
const IN_PROGRESS = CALL_STATUSES.filter((status) => !isTerminal(status));

/**
 * Locks the org's row until the transaction ends (FOR NO KEY UPDATE: the lock a balance movement takes,
 * so rows that merely reference the org are not held up) and returns its plan's concurrency cap, null
 * for none (or no plan). Undefined for an unknown org.
 */
export async function lockOrgCallCap(db: Db, orgId: string): Promise<{ cap: number | null } | undefined> {
  const row = await db
    .selectFrom('orgs')
    .leftJoin('plans', 'plans.id', 'orgs.plan_id')
    .select('plans.max_concurrent_calls')
    .where('orgs.id', '=', orgId)
    .forNoKeyUpdate('orgs')
    .executeTakeFirst();
  return row && { cap: row.max_concurrent_calls };
}

/**
 * How many of the org's calls are in progress: calls that have not ended (from the status counters)
 * plus placements still between their two transactions, pending or waiting for reconciliation (either
 * may be a call the provider is dialing). Run it after lockOrgCallCap, as its own statement, so it sees
 * every placement committed before the lock was granted.
 */
export async function countCallsInProgress(db: Db, orgId: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    SELECT (SELECT coalesce(sum(count), 0) FROM call_status_counts
            WHERE org_id = ${orgId} AND status = ANY(${IN_PROGRESS}::text[]))
         + (SELECT count(*) FROM call_placements WHERE org_id = ${orgId}) AS n`.execute(db);
  return Number(rows[0]!.n);
}
