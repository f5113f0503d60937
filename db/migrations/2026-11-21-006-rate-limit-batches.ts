// rate_limit_take takes several slots in one call. The service sends one call per org at a time for
// all of the org's requests waiting for a slot (src/orgs/rate-limiter.ts), so a busy org costs one
// database round trip and one advisory-lock hold per batch instead of per request, with the same
// answers. Still committed asynchronously (see migration 005).
import { sql, type Kysely } from 'kysely';
import * as asynchronousCommit from './2026-11-21-005-rate-limit-async-commit.js';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION rate_limit_take(uuid, integer, bigint)`.execute(db);
  // Takes up to p_count slots for an org if its sliding 60-second window has room (the first requests
  // of the batch get them). Returns how many were granted, the hits in the window after granting, the
  // ms until the oldest counted bucket leaves the window, and, when some were refused, the ms until
  // one more request fits (null otherwise).
  await sql`
    CREATE FUNCTION rate_limit_take(p_org uuid, p_limit integer, p_now_ms bigint, p_count integer)
    RETURNS TABLE (granted integer, used integer, reset_ms bigint, retry_ms bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      v_second bigint := p_now_ms / 1000;
      v_used integer;
      v_granted integer;
      v_oldest bigint;
      v_retry bigint;
    BEGIN
      PERFORM set_config('synchronous_commit', 'off', true);
      PERFORM pg_advisory_xact_lock(hashtextextended(p_org::text, 7));
      DELETE FROM rate_limit_buckets WHERE org_id = p_org AND second < v_second - 60;
      SELECT coalesce(sum(hits), 0)::integer INTO v_used FROM rate_limit_buckets WHERE org_id = p_org;
      v_granted := least(p_count, greatest(p_limit - v_used, 0));
      IF v_granted > 0 THEN
        INSERT INTO rate_limit_buckets (org_id, second, hits) VALUES (p_org, v_second, v_granted)
        ON CONFLICT (org_id, second) DO UPDATE SET hits = rate_limit_buckets.hits + excluded.hits;
        v_used := v_used + v_granted;
      END IF;
      SELECT min(second) INTO v_oldest FROM rate_limit_buckets WHERE org_id = p_org;
      IF v_granted < p_count THEN
        -- The earliest moment enough buckets have left the window for one more request to fit.
        SELECT b.second INTO v_retry FROM (
          SELECT second, sum(hits) OVER (ORDER BY second) AS running FROM rate_limit_buckets WHERE org_id = p_org
        ) b WHERE b.running >= v_used - p_limit + 1 ORDER BY b.second LIMIT 1;
        v_retry := greatest((v_retry + 61) * 1000 - p_now_ms, 0);
      END IF;
      RETURN QUERY SELECT v_granted, v_used, greatest((v_oldest + 61) * 1000 - p_now_ms, 0), v_retry;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION rate_limit_take(uuid, integer, bigint, integer)`.execute(db);
  await asynchronousCommit.up(db);
}
