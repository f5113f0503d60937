// The shared sliding-window counter in PostgreSQL (function rate_limit_take), one call per batch.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import { prepareQuery, type Arg } from '../database/prepared-query.js';

/** What one rate_limit_take call answers (see db/functions/rate_limit_take.sql). */
export interface RateLimitTake {
  granted: number;
  reserved: number;
  used: number;
  reset_ms: number;
  retry_ms: number | null;
  counted_second: number;
}

/** One rate_limit_take call: the batch's slots, the reservation wanted, and unused slots given back. */
export interface RateLimitTakeRequest {
  orgId: string;
  limit: number;
  nowMs: number;
  count: number;
  extra: number;
  leaseMs: number;
  giveBack: { count: number; second: number } | null;
}

/** Takes up to `count` slots (and reserves up to `extra`) in the org's 60-second window; database errors propagate. */
export async function takeRateLimitSlots(db: Db, take: RateLimitTakeRequest): Promise<RateLimitTake> {
  const rows = await rateLimitTake.execute(db, {
    ...take,
    giveBackCount: take.giveBack?.count ?? 0,
    giveBackSecond: take.giveBack?.second ?? 0,
  });
  return rows[0]!;
}

type TakeArgs = Omit<RateLimitTakeRequest, 'giveBack'> & { giveBackCount: number; giveBackSecond: number };

const rateLimitTake = prepareQuery(
  (_db, arg: Arg<TakeArgs>) => sql<RateLimitTake>`
    SELECT granted, reserved, used, reset_ms, retry_ms, counted_second
    FROM rate_limit_take(${arg('orgId')}::uuid, ${arg('limit')}::integer, ${arg('nowMs')}::bigint,
      ${arg('count')}::integer, ${arg('extra')}::integer, ${arg('leaseMs')}::integer,
      ${arg('giveBackCount')}::integer, ${arg('giveBackSecond')}::bigint)`,
);

/** Deletes rate-limit buckets whose latest hit left the window before `nowMs`; returns how many. */
export async function deleteLapsedBuckets(db: Db, nowMs: number): Promise<number> {
  const result = await sql`DELETE FROM rate_limit_buckets WHERE last_ms <= ${nowMs - 60_000}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
