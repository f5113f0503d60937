-- Appends an attempt to an endpoint's delivery log and keeps only its newest p_log_size lines. Unless the
-- attempt says nothing about the endpoint (p_affects_health false), also stores the latest status,
-- moves the failure streak (started by a failure, ended by a success) and switches the endpoint off,
-- abandoning its pending deliveries, once every attempt has failed for p_disable_after. Call with the
-- endpoint row locked. Returns whether it was switched off, since when it fails, and how many
-- deliveries were abandoned.
CREATE OR REPLACE FUNCTION log_webhook_attempt(
  p_webhook uuid, p_delivery uuid, p_attempt_id uuid, p_attempt integer, p_status_code integer,
  p_failure_kind text, p_excerpt text, p_duration_ms integer, p_attempted_at timestamptz,
  p_affects_health boolean, p_log_size integer, p_disable_after interval)
RETURNS TABLE (switched_off boolean, failing_since timestamptz, abandoned integer)
LANGUAGE plpgsql AS $$
DECLARE
  v_failing_since timestamptz;
  v_active boolean;
  v_abandoned integer := 0;
  v_switched_off boolean := false;
BEGIN
  IF p_affects_health THEN
    UPDATE webhooks AS w
    SET last_delivery_at = p_attempted_at,
        last_delivery_status = p_status_code,
        failing_since = CASE WHEN p_failure_kind IS NULL THEN NULL ELSE coalesce(w.failing_since, p_attempted_at) END
    WHERE w.id = p_webhook
    RETURNING w.failing_since, w.active INTO v_failing_since, v_active;
    IF v_active AND v_failing_since IS NOT NULL AND p_attempted_at - v_failing_since >= p_disable_after THEN
      UPDATE webhooks SET active = false, updated_at = p_attempted_at WHERE id = p_webhook;
      UPDATE webhook_deliveries SET status = 'abandoned', next_attempt_at = NULL, lease_expires_at = NULL, lease_owner = NULL
      WHERE webhook_id = p_webhook AND status = 'pending';
      GET DIAGNOSTICS v_abandoned = ROW_COUNT;
      v_switched_off := true;
    END IF;
  END IF;
  INSERT INTO webhook_attempts (id, delivery_id, webhook_id, attempt, status_code, failure_kind,
                                response_excerpt, duration_ms, attempted_at)
  VALUES (p_attempt_id, p_delivery, p_webhook, p_attempt, p_status_code, p_failure_kind,
          p_excerpt, p_duration_ms, p_attempted_at);
  DELETE FROM webhook_attempts AS a
  WHERE a.webhook_id = p_webhook
    AND a.seq <= (SELECT k.seq FROM webhook_attempts AS k WHERE k.webhook_id = p_webhook
                  ORDER BY k.seq DESC OFFSET p_log_size LIMIT 1);
  RETURN QUERY SELECT v_switched_off, v_failing_since, v_abandoned;
END $$;
