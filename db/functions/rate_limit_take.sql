-- Takes up to p_count request slots in an org's sliding 60-second window (the first requests of the
-- batch get them). Hits are grouped into one-second buckets; a bucket counts while any part of it
-- overlaps the window, so the limit is never exceeded. Returns how many slots were granted, the hits
-- in the window after granting, the ms until the oldest counted bucket leaves the window, and, when
-- some were refused, the ms until one more request fits (null otherwise).
--
-- The service calls this alone, never inside a transaction that pays for anything, so it commits
-- asynchronously: each org's requests would otherwise queue behind one WAL flush each. A crash can
-- lose the last fraction of a second of counted hits; rows are never corrupted.
CREATE OR REPLACE FUNCTION rate_limit_take(p_org uuid, p_limit integer, p_now_ms bigint, p_count integer)
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
END $$;
