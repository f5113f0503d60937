-- Records an attempt on a leased delivery in one round trip: locks the endpoint row, ends the lease
-- with the delivery's new state, then logs the attempt (log_webhook_attempt). Outcome 'gone' when the
-- endpoint no longer exists and 'lease_lost' when the lease (owner and expiry) is no longer the
-- caller's, because it lapsed and another process took the delivery over; in both cases nothing is written.
--
-- Index scans only (SET enable_seqscan = off): every statement here reaches its rows by key, and
-- PL/pgSQL keeps each statement's plan for the life of the connection. A plan made while a table was
-- nearly empty (a new deployment, or statistics taken then) scanned it whole on every call once it
-- had grown.
CREATE OR REPLACE FUNCTION record_webhook_attempt(
  p_delivery uuid, p_lease_owner text, p_lease_expires_at timestamptz, p_status text, p_attempt_count integer,
  p_next_attempt_at timestamptz,
  p_webhook uuid, p_attempt_id uuid, p_status_code integer, p_failure_kind text, p_excerpt text,
  p_duration_ms integer, p_attempted_at timestamptz, p_affects_health boolean, p_log_size integer,
  p_disable_after interval)
RETURNS TABLE (outcome text, switched_off boolean, failing_since timestamptz, abandoned integer)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
BEGIN
  PERFORM 1 FROM webhooks WHERE id = p_webhook FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'gone'::text, false, NULL::timestamptz, 0;
    RETURN;
  END IF;
  UPDATE webhook_deliveries
  SET status = p_status, attempt_count = p_attempt_count, next_attempt_at = p_next_attempt_at,
      lease_expires_at = NULL, lease_owner = NULL
  WHERE id = p_delivery AND lease_owner = p_lease_owner AND lease_expires_at = p_lease_expires_at;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'lease_lost'::text, false, NULL::timestamptz, 0;
    RETURN;
  END IF;
  RETURN QUERY SELECT 'recorded'::text, l.switched_off, l.failing_since, l.abandoned
  FROM log_webhook_attempt(p_webhook, p_delivery, p_attempt_id, p_attempt_count, p_status_code,
                           p_failure_kind, p_excerpt, p_duration_ms, p_attempted_at,
                           p_affects_health, p_log_size, p_disable_after) AS l;
END $$;
