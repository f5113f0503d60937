// The balance.low event. Each org gets a low-balance threshold (10,000 paise unless the operator sets
// another; 0 switches the event off) and a running total of the holds its calls in flight have taken
// from its balance, kept by the same statements that move the balance. A test twin follows its live
// org's threshold, as it follows its name, plan and caller id.
import { sql, type Kysely } from 'kysely';

/** A new org's low-balance threshold, in paise (₹100). */
const DEFAULT_LOW_BALANCE_THRESHOLD_PAISE = 10_000;

/** The balance a test twin opens with, as in migration 029. */
const OPENING_TEST_BALANCE_PAISE = 1_000_000;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE orgs
            ADD COLUMN low_balance_threshold_paise bigint NOT NULL
              DEFAULT ${sql.lit(DEFAULT_LOW_BALANCE_THRESHOLD_PAISE)}
              CHECK (low_balance_threshold_paise >= 0),
            ADD COLUMN held_paise bigint NOT NULL DEFAULT 0`.execute(db);
  // The holds outstanding now: placements waiting for their provider and calls that have not ended.
  await sql`
    UPDATE orgs o SET held_paise =
      coalesce((SELECT sum(p.hold_paise) FROM call_placements p WHERE p.org_id = o.id), 0)
      + coalesce((SELECT sum(c.hold_paise) FROM calls c
                  WHERE c.org_id = o.id AND c.status IN ('queued', 'dialing', 'ringing', 'in_progress')), 0)`.execute(
    db,
  );

  await sql`
    CREATE OR REPLACE FUNCTION org_add_test_twin(p_org uuid) RETURNS uuid LANGUAGE plpgsql AS $$
    DECLARE
      v_twin uuid;
    BEGIN
      INSERT INTO orgs (name, plan_id, default_from_e164, low_balance_threshold_paise, balance_paise, live_org_id,
                        created_at)
      SELECT name, plan_id, default_from_e164, low_balance_threshold_paise, ${sql.lit(OPENING_TEST_BALANCE_PAISE)}, id, created_at
      FROM orgs WHERE id = p_org
      RETURNING id INTO v_twin;
      INSERT INTO credit_ledger (org_id, amount_paise, kind, note)
      VALUES (v_twin, ${sql.lit(OPENING_TEST_BALANCE_PAISE)}, 'top_up', 'test-mode opening balance');
      RETURN v_twin;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION orgs_copy_to_test_twin() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE orgs SET name = NEW.name, plan_id = NEW.plan_id, default_from_e164 = NEW.default_from_e164,
                      low_balance_threshold_paise = NEW.low_balance_threshold_paise
      WHERE live_org_id = NEW.id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE TRIGGER orgs_copy_to_test_twin
    AFTER UPDATE OF name, plan_id, default_from_e164, low_balance_threshold_paise ON orgs
    FOR EACH ROW WHEN (NEW.live_org_id IS NULL) EXECUTE FUNCTION orgs_copy_to_test_twin()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE OR REPLACE TRIGGER orgs_copy_to_test_twin AFTER UPDATE OF name, plan_id, default_from_e164 ON orgs
    FOR EACH ROW WHEN (NEW.live_org_id IS NULL) EXECUTE FUNCTION orgs_copy_to_test_twin()`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION orgs_copy_to_test_twin() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE orgs SET name = NEW.name, plan_id = NEW.plan_id, default_from_e164 = NEW.default_from_e164
      WHERE live_org_id = NEW.id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE OR REPLACE FUNCTION org_add_test_twin(p_org uuid) RETURNS uuid LANGUAGE plpgsql AS $$
    DECLARE
      v_twin uuid;
    BEGIN
      INSERT INTO orgs (name, plan_id, default_from_e164, balance_paise, live_org_id, created_at)
      SELECT name, plan_id, default_from_e164, ${sql.lit(OPENING_TEST_BALANCE_PAISE)}, id, created_at
      FROM orgs WHERE id = p_org
      RETURNING id INTO v_twin;
      INSERT INTO credit_ledger (org_id, amount_paise, kind, note)
      VALUES (v_twin, ${sql.lit(OPENING_TEST_BALANCE_PAISE)}, 'top_up', 'test-mode opening balance');
      RETURN v_twin;
    END $$`.execute(db);
  await sql`ALTER TABLE orgs DROP COLUMN held_paise, DROP COLUMN low_balance_threshold_paise`.execute(db);
}
