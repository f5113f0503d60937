-- Keeps campaign_call_counts (a campaign's ended calls, by ending status) in step with calls, so
-- GET /calls?campaign_id= has its total without counting the campaign's whole history. Run as a
-- deferred row trigger (migration 035): at commit, after every other lock the transaction takes, and
-- only for a call of a campaign that reaches or leaves an ending status (the trigger's WHEN). A call
-- never leaves an ending status, so in practice each call adds one to one row, once, when it ends; a
-- call moved between campaigns or out of an ending (only a hand-made change does that) is counted too.
--
-- Index scans only (SET enable_seqscan = off): PL/pgSQL keeps each statement's plan for the life of the
-- connection, and a plan made while the table was nearly empty would scan it whole once it had grown.
CREATE OR REPLACE FUNCTION count_campaign_calls() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.campaign_id IS NOT NULL
     AND OLD.status IN ('completed', 'failed', 'no_answer', 'busy', 'canceled') THEN
    UPDATE campaign_call_counts SET count = count - 1 WHERE campaign_id = OLD.campaign_id AND status = OLD.status;
  END IF;
  IF NEW.campaign_id IS NOT NULL AND NEW.status IN ('completed', 'failed', 'no_answer', 'busy', 'canceled') THEN
    INSERT INTO campaign_call_counts AS c (campaign_id, status, count) VALUES (NEW.campaign_id, NEW.status, 1)
    ON CONFLICT (campaign_id, status) DO UPDATE SET count = c.count + 1;
  END IF;
  RETURN NULL;
END $$;
