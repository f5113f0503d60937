-- Records placements the provider took as queued calls, in one round trip. First the provider call ids'
-- locks, in the order given (the caller sorts them as every taker of these locks does), so a report about
-- one of these calls either committed before the statements below look for waiting reports, or waits and
-- then finds the call. Then the placements still there are removed, and their calls (rows the caller
-- built, one per placement) are inserted with their first timeline entries and their holds in the ledger.
-- Returns the calls inserted; a placement already gone (recovery settled it) has none.
--
-- With p_alone the call is a statement of its own, with no transaction around it: when reports wait for
-- any of the calls it refuses with SQLSTATE VCRW1, having written nothing (the caller records them in a
-- transaction that applies the reports), and otherwise it moves the orgs' queued counters itself, last.
-- Without p_alone the caller applies the waiting reports and moves the counters.
--
-- Index scans only (SET enable_seqscan = off), as in record_webhook_attempt.sql: PL/pgSQL keeps each
-- statement's plan for the life of the connection, and every statement here reaches its rows by key.
-- The look for reports waiting by call id names no provider on purpose (a call id is one call's, whatever
-- its provider): with a provider condition, a plan made while provider_events was nearly empty could
-- walk the provider's every report through provider_events_key, for as long as the connection lived.
-- Without it, the waiting-reports index is the only index the look can use.
CREATE OR REPLACE FUNCTION record_placed_calls(p_lock_keys text[], p_provider text, p_calls jsonb, p_alone boolean)
RETURNS SETOF calls
LANGUAGE plpgsql SET enable_seqscan = off AS $$
DECLARE
  v_taken uuid[];
BEGIN
  PERFORM pg_advisory_xact_lock(hashtextextended(lock_key, 0))
  FROM unnest(p_lock_keys) WITH ORDINALITY AS keys(lock_key, position)
  ORDER BY position;

  WITH taken AS (
    DELETE FROM call_placements
    WHERE id IN (SELECT (given ->> 'id')::uuid FROM jsonb_array_elements(p_calls) AS given)
    RETURNING id
  )
  SELECT coalesce(array_agg(id), '{}') INTO v_taken FROM taken;

  RETURN QUERY
  WITH inserted AS (
    INSERT INTO calls (id, org_id, agent_id, status, from_e164, to_e164, language, max_duration_sec,
                       rate_paise_per_minute, hold_paise, metadata, provider, provider_call_id, next_step_at,
                       created_at, campaign_id, campaign_contact_id, campaign_attempt)
    SELECT id, org_id, agent_id, status, from_e164, to_e164, language, max_duration_sec,
           rate_paise_per_minute, hold_paise, metadata, provider, provider_call_id, next_step_at,
           created_at, campaign_id, campaign_contact_id, campaign_attempt
    FROM jsonb_populate_recordset(NULL::calls, p_calls)
    WHERE id = ANY (v_taken)
    RETURNING *
  ), first_entries AS (
    INSERT INTO call_timeline (call_id, at, kind, detail)
    SELECT id, created_at, 'status-changed', jsonb_build_object('status', status) FROM inserted
  ), holds AS (
    INSERT INTO credit_ledger (org_id, amount_paise, kind, call_id)
    SELECT org_id, -hold_paise, 'hold', id FROM inserted WHERE hold_paise <> 0
  )
  SELECT * FROM inserted;

  IF NOT p_alone THEN
    RETURN;
  END IF;
  IF EXISTS (
    SELECT 1 FROM provider_events
    WHERE call_id = ANY (v_taken) AND call_id IS NOT NULL AND applied_at IS NULL
  ) OR EXISTS (
    SELECT 1
    FROM jsonb_populate_recordset(NULL::calls, p_calls) AS given
    JOIN provider_events AS waiting
      ON waiting.provider = p_provider AND waiting.provider_call_id = given.provider_call_id
     AND waiting.provider_call_id IS NOT NULL AND waiting.applied_at IS NULL
    WHERE given.id = ANY (v_taken)
  ) THEN
    RAISE EXCEPTION 'reports wait for a call being recorded' USING ERRCODE = 'VCRW1';
  END IF;
  INSERT INTO call_status_counts AS counts (org_id, status, count)
  SELECT org_id, status, count(*)
  FROM jsonb_populate_recordset(NULL::calls, p_calls)
  WHERE id = ANY (v_taken)
  GROUP BY org_id, status
  ORDER BY org_id, status
  ON CONFLICT (org_id, status) DO UPDATE SET count = counts.count + excluded.count;
END $$;
