// rate_limit_take commits asynchronously: each org's requests would otherwise queue behind one WAL
// flush each while holding the org's advisory lock. A crash can lose the last fraction of a second of
// counted hits; rows are never corrupted. Only the function's own transaction is affected.
import { sql, type Kysely } from 'kysely';

function rateLimitTake(asynchronousCommit: boolean) {
  return sql`
    CREATE OR REPLACE FUNCTION rate_limit_take(p_org uuid, p_limit integer, p_now_ms bigint)
    RETURNS TABLE (allowed boolean, used integer, reset_ms bigint)
    LANGUAGE plpgsql AS $$
    DECLARE
      v_second bigint := p_now_ms / 1000;
      v_used integer;
      v_oldest bigint;
      v_target integer;
    BEGIN
      ${sql.raw(asynchronousCommit ? `PERFORM set_config('synchronous_commit', 'off', true);` : '')}
      PERFORM pg_advisory_xact_lock(hashtextextended(p_org::text, 7));
      DELETE FROM rate_limit_buckets WHERE org_id = p_org AND second < v_second - 60;
      SELECT coalesce(sum(hits), 0)::integer INTO v_used FROM rate_limit_buckets WHERE org_id = p_org;
      IF v_used < p_limit THEN
        INSERT INTO rate_limit_buckets (org_id, second, hits) VALUES (p_org, v_second, 1)
        ON CONFLICT (org_id, second) DO UPDATE SET hits = rate_limit_buckets.hits + 1;
        v_used := v_used + 1;
        SELECT min(second) INTO v_oldest FROM rate_limit_buckets WHERE org_id = p_org;
        RETURN QUERY SELECT true, v_used, greatest((v_oldest + 61) * 1000 - p_now_ms, 0);
      ELSE
        -- The earliest moment enough buckets have left the window for one more request to fit.
        v_target := v_used - p_limit + 1;
        SELECT b.second INTO v_oldest FROM (
          SELECT second, sum(hits) OVER (ORDER BY second) AS running FROM rate_limit_buckets WHERE org_id = p_org
        ) b WHERE b.running >= v_target ORDER BY b.second LIMIT 1;
        RETURN QUERY SELECT false, v_used, greatest((v_oldest + 61) * 1000 - p_now_ms, 0);
      END IF;
    END $$`;
}

export async function up(db: Kysely<any>): Promise<void> {
  await rateLimitTake(true).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await rateLimitTake(false).execute(db);
}
