// The shared allowance of failed authentications per client address: a token bucket in one row, spent
// and refilled in a single statement so that concurrent API processes never count the same token twice.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';

/** An address's allowance as the database left it after a failure was spent. */
export interface SpentAllowance {
  tokens: number;
  atMs: number;
}

/**
 * Spends one failed authentication of `address`: refills its bucket for the time since it was last
 * touched (`perMinute` tokens a minute, at most `perMinute`), takes one token, and returns what is left
 * (below 1: the address is out of failures). Commits asynchronously, like the rate limit: a crash may
 * forget the last moment's failures. Database errors propagate.
 */
export async function spendAuthFailure(
  db: Db,
  address: string,
  perMinute: number,
  nowMs: number,
): Promise<SpentAllowance> {
  const result = await sql<{ tokens: number; at_ms: number }>`
    WITH async AS (SELECT set_config('synchronous_commit', 'off', true))
    INSERT INTO auth_failure_allowances AS a (address, tokens, at_ms)
    SELECT ${address}, ${perMinute}::double precision - 1, ${nowMs}::bigint FROM async
    ON CONFLICT (address) DO UPDATE SET
      tokens = greatest(
        least(${perMinute}::double precision, a.tokens + greatest(${nowMs}::bigint - a.at_ms, 0) * ${perMinute}::double precision / 60000) - 1,
        -1),
      at_ms = greatest(a.at_ms, ${nowMs}::bigint)
    RETURNING tokens, at_ms`.execute(db);
  const row = result.rows[0]!;
  return { tokens: Number(row.tokens), atMs: Number(row.at_ms) };
}

/** Deletes the allowances untouched for a minute or more (they have refilled completely); returns how many. */
export async function deleteFullAllowances(db: Db, nowMs: number): Promise<number> {
  const result = await sql`DELETE FROM auth_failure_allowances WHERE at_ms <= ${nowMs - 60_000}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
