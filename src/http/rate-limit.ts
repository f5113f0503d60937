// Per-org sliding-window rate limit, kept in PostgreSQL so every instance shares it.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import { ApiError } from './errors.js';

export interface RateLimitOutcome {
  headers: Record<string, string>;
}

/**
 * Takes one request slot for the org in its 60-second window. Returns the X-RateLimit-* headers to
 * send; throws ApiError too_many_requests (with Retry-After) when the window is full.
 */
export async function takeRateLimitSlot(db: Db, orgId: string, limit: number, nowMs: number): Promise<RateLimitOutcome> {
  const { rows } = await sql<{ allowed: boolean; used: number; reset_ms: number }>`
    SELECT allowed, used, reset_ms FROM rate_limit_take(${orgId}::uuid, ${limit}::integer, ${nowMs}::bigint)`.execute(db);
  const row = rows[0]!;
  const resetSeconds = Math.max(1, Math.ceil(Number(row.reset_ms) / 1000));
  const headers = {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(Math.max(0, limit - row.used)),
    'X-RateLimit-Reset': String(resetSeconds),
  };
  if (!row.allowed) {
    throw new ApiError(
      'too_many_requests',
      `Rate limit of ${limit} requests per minute exceeded; retry in ${resetSeconds} seconds.`,
      { headers: { ...headers, 'Retry-After': String(resetSeconds) } },
    );
  }
  return { headers };
}
