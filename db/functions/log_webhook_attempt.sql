-- Appends an attempt to an endpoint's delivery log and keeps only its newest p_log_size lines. Unless the
-- attempt says nothing about the endpoint (p_affects_health false), also stores the latest status,
-- moves the failure streak (started by a failure, ended by a success) and switches the endpoint off,
-- dropping its pending deliveries, once every attempt has failed for p_disable_after. Call with the
-- endpoint row locked. Returns whether it was switched off, since when it fails, and how many
-- deliveries were dropped.
--
-- Each logged attempt takes the endpoint's next log_position, so the one line that falls out of the log
-- is found by its number in one index probe. (p_log_size is a constant of the code; were it ever
-- lowered, the lines between the old and the new size would need a one-off prune.)
--
-- Index scans only (SET enable_seqscan = off): every statement here reaches its rows by key, and
-- PL/pgSQL keeps each statement's plan for the life of the connection. A plan made while a table was
-- nearly empty (a new deployment, or statistics taken then) scanned it whole on every call once it
-- had grown: about 4,000 rows read per scan in the webhooks benchmark.
CREATE OR REPLACE FUNCTION log_webhook_attempt(
  p_webhook uuid, p_delivery uuid, p_attempt_id uuid, p_attempt integer, p_status_code integer,
  p_failure_kind text, p_excerpt text, p_duration_ms integer, p_attempted_at timestamptz,
  p_affects_health boolean, p_log_size integer, p_disable_after interval)
RETURNS TABLE (switched_off boolean, failing_since timestamptz, abandoned integer)
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  v_position bigint;
  v_failing_since timestamptz;
  v_active boolean;
  v_abandoned integer := 0;
  v_switched_off boolean := false;
BEGIN
  UPDATE webhooks AS w
  SET attempts_logged = w.attempts_logged + 1,
      last_delivery_at = CASE WHEN p_affects_health THEN p_attempted_at ELSE w.last_delivery_at END,
      last_delivery_status = CASE WHEN p_affects_health THEN p_status_code ELSE w.last_delivery_status END,
      failing_since = CASE
        WHEN NOT p_affects_health THEN w.failing_since
        WHEN p_failure_kind IS NULL THEN NULL
        ELSE coalesce(w.failing_since, p_attempted_at) END
  WHERE w.id = p_webhook
  RETURNING w.attempts_logged, w.failing_since, w.active INTO v_position, v_failing_since, v_active;
  IF p_affects_health AND v_active AND v_failing_since IS NOT NULL
     AND p_attempted_at - v_failing_since >= p_disable_after THEN
    -- As a manual switch-off: a cut drops what is pending (the clean-up marks it in batches), so the
    -- switch-off costs the same whatever the backlog.
    UPDATE webhooks
    SET active = false, updated_at = p_attempted_at,
        dropped_before_seq = nextval(pg_get_serial_sequence('webhook_deliveries', 'seq'))
    WHERE id = p_webhook;
    SELECT count(*) INTO v_abandoned FROM webhook_deliveries WHERE webhook_id = p_webhook AND status = 'pending';
    v_switched_off := true;
  END IF;
  INSERT INTO webhook_attempts (id, delivery_id, webhook_id, attempt, status_code, failure_kind,
                                response_excerpt, duration_ms, attempted_at, log_position)
  VALUES (p_attempt_id, p_delivery, p_webhook, p_attempt, p_status_code, p_failure_kind,
          p_excerpt, p_duration_ms, p_attempted_at, v_position);
  DELETE FROM webhook_attempts WHERE webhook_id = p_webhook AND log_position = v_position - p_log_size;
  RETURN QUERY SELECT v_switched_off, v_failing_since, v_abandoned;
END $$;
