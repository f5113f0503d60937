-- Takes up to p_count request slots in an org's sliding 60-second window (the first requests of the
-- batch get them). Hits are grouped into one-second buckets that remember their latest hit; a bucket
-- counts until 60 s after that hit, so the limit is never exceeded in any 60 s and a request refused
-- for it is accepted again at most 60 s later. Returns how many slots were granted, the hits in the
-- window after granting, the ms until the oldest counted bucket leaves the window, and, when some were
-- refused, the ms until one more request fits (null otherwise); both are between 1 and 60,000.
--
-- The service calls this alone, never inside a transaction that pays for anything, so it commits
-- asynchronously: each org's requests would otherwise queue behind one WAL flush each. A crash can
-- lose the last fraction of a second of counted hits; rows are never corrupted.
CREATE OR REPLACE FUNCTION rate_limit_take(p_org uuid, p_limit integer, p_now_ms bigint, p_count integer)
RETURNS TABLE (granted integer, used integer, reset_ms bigint, retry_ms bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_used integer;
  v_granted integer;
  v_oldest bigint;
  v_retry bigint;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(hashtextextended(p_org::text, 7));
  DELETE FROM rate_limit_buckets WHERE org_id = p_org AND last_ms <= p_now_ms - 60000;
  SELECT coalesce(sum(hits), 0)::integer INTO v_used FROM rate_limit_buckets WHERE org_id = p_org;
  v_granted := least(p_count, greatest(p_limit - v_used, 0));
  IF v_granted > 0 THEN
    INSERT INTO rate_limit_buckets (org_id, second, hits, last_ms) VALUES (p_org, p_now_ms / 1000, v_granted, p_now_ms)
    ON CONFLICT (org_id, second) DO UPDATE
      SET hits = rate_limit_buckets.hits + excluded.hits,
          last_ms = greatest(rate_limit_buckets.last_ms, excluded.last_ms);
    v_used := v_used + v_granted;
  END IF;
  SELECT min(last_ms) INTO v_oldest FROM rate_limit_buckets WHERE org_id = p_org;
  IF v_granted < p_count THEN
    -- Buckets leave the window in the order of their latest hits: the moment enough have left for one
    -- more request to fit.
    SELECT b.last_ms INTO v_retry FROM (
      SELECT last_ms, sum(hits) OVER (ORDER BY last_ms, second) AS running FROM rate_limit_buckets WHERE org_id = p_org
    ) b WHERE b.running >= v_used - p_limit + 1 ORDER BY b.last_ms LIMIT 1;
    v_retry := greatest(v_retry + 60000 - p_now_ms, 1);
  END IF;
  RETURN QUERY SELECT v_granted, v_used, greatest(coalesce(v_oldest, p_now_ms) + 60000 - p_now_ms, 1), v_retry;
END $$;
