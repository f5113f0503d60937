// Recording a webhook attempt in one database round trip: locking the endpoint, settling the delivery,
// the endpoint's health, the log line and its pruning run inside one function call, in the lock order
// endpoint row, then delivery row.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // Appends an attempt to an endpoint's log and keeps only its newest p_log_size lines. Unless the
  // attempt says nothing about the endpoint (p_affects_health false), also stores the latest status,
  // moves the failure streak (started by a failure, ended by a success) and switches the endpoint off,
  // abandoning its pending deliveries, once every attempt has failed for p_disable_after. Call with
  // the endpoint row locked. Returns whether it was switched off, since when it fails, and how many
  // deliveries were abandoned.
  await sql`
    CREATE FUNCTION log_webhook_attempt(
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
          UPDATE webhook_deliveries SET status = 'abandoned', next_attempt_at = NULL, lease_expires_at = NULL
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
    END $$`.execute(db);

  // Records a worker's attempt on a leased delivery: locks the endpoint row, ends the lease with the
  // delivery's new state, then logs the attempt (log_webhook_attempt). Outcome 'gone' when the
  // endpoint no longer exists and 'lease_lost' when the lease is no longer the caller's (another worker
  // took the delivery over); in both cases nothing was written.
  await sql`
    CREATE FUNCTION record_webhook_attempt(
      p_delivery uuid, p_lease_expires_at timestamptz, p_status text, p_attempt_count integer,
      p_next_attempt_at timestamptz,
      p_webhook uuid, p_attempt_id uuid, p_status_code integer, p_failure_kind text, p_excerpt text,
      p_duration_ms integer, p_attempted_at timestamptz, p_affects_health boolean, p_log_size integer,
      p_disable_after interval)
    RETURNS TABLE (outcome text, switched_off boolean, failing_since timestamptz, abandoned integer)
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM webhooks WHERE id = p_webhook FOR NO KEY UPDATE;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'gone'::text, false, NULL::timestamptz, 0;
        RETURN;
      END IF;
      UPDATE webhook_deliveries
      SET status = p_status, attempt_count = p_attempt_count, next_attempt_at = p_next_attempt_at,
          lease_expires_at = NULL
      WHERE id = p_delivery AND lease_expires_at = p_lease_expires_at;
      IF NOT FOUND THEN
        RETURN QUERY SELECT 'lease_lost'::text, false, NULL::timestamptz, 0;
        RETURN;
      END IF;
      RETURN QUERY SELECT 'recorded'::text, l.switched_off, l.failing_since, l.abandoned
      FROM log_webhook_attempt(p_webhook, p_delivery, p_attempt_id, p_attempt_count, p_status_code,
                               p_failure_kind, p_excerpt, p_duration_ms, p_attempted_at,
                               p_affects_health, p_log_size, p_disable_after) AS l;
    END $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION record_webhook_attempt`.execute(db);
  await sql`DROP FUNCTION log_webhook_attempt`.execute(db);
}
