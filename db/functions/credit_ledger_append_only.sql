-- Trigger function behind credit_ledger_no_change: the credit ledger only grows. Any UPDATE or DELETE
-- of a ledger row is refused, so a balance can always be re-derived from the rows that made it.
CREATE OR REPLACE FUNCTION credit_ledger_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'credit_ledger is append-only';
END $$;
