-- Takes up to p_count request slots in an org's sliding 60-second window (the first requests of the
-- batch get them), and, when all of them fit, reserves up to p_extra more for the calling instance to
-- hand out during the next p_lease_ms without asking again. Hits are grouped into one-second buckets
-- that remember their latest hit; a bucket counts until 60 s after that hit. Reserved slots may be used
-- up to p_lease_ms from now, so a batch with a reservation is counted as if made at the end of the lease:
-- whenever its slots are used, the limit is never exceeded in any 60 s. p_return slots of an earlier
-- reservation that went unused are first given back to the bucket p_return_second they were counted in.
--
-- Returns the slots granted and reserved, the hits in the window after that, the ms until the oldest
-- counted bucket leaves the window, when some were refused the ms until one more request fits (null
-- otherwise), both between 1 and 60,000, and the bucket the slots were counted in.
--
-- The service calls this alone, never inside a transaction that pays for anything, so it commits
-- asynchronously: each org's requests would otherwise queue behind one WAL flush each. A crash can
-- lose the last fraction of a second of counted hits; rows are never corrupted. (The four-argument
-- rate_limit_take of earlier releases stays installed in databases that had it, for instances still
-- running them during a rolling upgrade.)
--
-- Index scans only (SET enable_seqscan = off): every statement here reaches one org's buckets by key,
-- and PL/pgSQL keeps each statement's plan for the life of the connection. A plan made while the
-- table was nearly empty scanned every org's buckets on each request once many orgs had filled it.
CREATE OR REPLACE FUNCTION rate_limit_take(
  p_org uuid, p_limit integer, p_now_ms bigint, p_count integer,
  p_extra integer, p_lease_ms integer, p_return integer, p_return_second bigint)
RETURNS TABLE (granted integer, reserved integer, used integer, reset_ms bigint, retry_ms bigint, counted_second bigint)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  v_used integer;
  v_granted integer;
  v_reserved integer := 0;
  v_at bigint := p_now_ms;
  v_oldest bigint;
  v_retry bigint;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(hashtextextended(p_org::text, 7));
  IF p_return > 0 THEN
    UPDATE rate_limit_buckets SET hits = hits - least(p_return, hits) WHERE org_id = p_org AND second = p_return_second;
  END IF;
  DELETE FROM rate_limit_buckets WHERE org_id = p_org AND (last_ms <= p_now_ms - 60000 OR hits <= 0);
  SELECT coalesce(sum(hits), 0)::integer INTO v_used FROM rate_limit_buckets WHERE org_id = p_org;
  v_granted := least(p_count, greatest(p_limit - v_used, 0));
  IF v_granted = p_count THEN
    v_reserved := greatest(least(p_extra, p_limit - v_used - v_granted), 0);
  END IF;
  IF v_reserved > 0 THEN
    v_at := p_now_ms + p_lease_ms;
  END IF;
  IF v_granted + v_reserved > 0 THEN
    INSERT INTO rate_limit_buckets (org_id, second, hits, last_ms) VALUES (p_org, v_at / 1000, v_granted + v_reserved, v_at)
    ON CONFLICT (org_id, second) DO UPDATE
      SET hits = rate_limit_buckets.hits + excluded.hits,
          last_ms = greatest(rate_limit_buckets.last_ms, excluded.last_ms);
    v_used := v_used + v_granted + v_reserved;
  END IF;
  SELECT min(last_ms) INTO v_oldest FROM rate_limit_buckets WHERE org_id = p_org;
  IF v_granted < p_count THEN
    -- Buckets leave the window in the order of their latest hits: the moment enough have left for one
    -- more request to fit. A bucket counted ahead for a reservation may leave it slightly later than
    -- 60 s from now; the answer is capped at 60 s all the same.
    SELECT b.last_ms INTO v_retry FROM (
      SELECT last_ms, sum(hits) OVER (ORDER BY last_ms, second) AS running FROM rate_limit_buckets WHERE org_id = p_org
    ) b WHERE b.running >= v_used - p_limit + 1 ORDER BY b.last_ms LIMIT 1;
    v_retry := least(greatest(v_retry + 60000 - p_now_ms, 1), 60000);
  END IF;
  RETURN QUERY SELECT v_granted, v_reserved, v_used,
    least(greatest(coalesce(v_oldest, p_now_ms) + 60000 - p_now_ms, 1), 60000), v_retry, v_at / 1000;
END $$;
