// The shared sliding-window counter in PostgreSQL (function rate_limit_take), one call per batch.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';

/** What one rate_limit_take call answers: slots granted, hits in the window, and the ms to report. */
export interface RateLimitTake {
  granted: number;
  used: number;
  reset_ms: number;
  retry_ms: number | null;
}

/** Takes up to `count` slots in the org's 60-second window at `nowMs`; database errors propagate. */
export async function takeRateLimitSlots(
  db: Db,
  take: { orgId: string; limit: number; nowMs: number; count: number },
): Promise<RateLimitTake> {
  const { rows } = await sql<RateLimitTake>`
    SELECT granted, used, reset_ms, retry_ms
    FROM rate_limit_take(${take.orgId}::uuid, ${take.limit}::integer, ${take.nowMs}::bigint, ${take.count}::integer)`.execute(
    db,
  );
  return rows[0]!;
}

/** Deletes rate-limit buckets whose latest hit left the window before `nowMs`; returns how many. */
export async function deleteLapsedBuckets(db: Db, nowMs: number): Promise<number> {
  const result = await sql`DELETE FROM rate_limit_buckets WHERE last_ms <= ${nowMs - 60_000}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
