// Test mode. Every org gets a test twin: a second row of `orgs` whose `live_org_id` names the org it
// belongs to. Test keys belong to the twin, so every table already scoped by org keeps test data apart
// from live data (calls, contacts, webhook endpoints, deliveries, events, idempotency keys, rate-limit
// windows, credits) with no change to those tables. Triggers keep the pair in step: a live org made by
// any path gets its twin with the opening test balance, and a change of its name, plan or default
// caller id is copied to the twin. Events and audit entries record their mode; a test balance can be
// reset (a `reset` ledger row).
import { sql, type Kysely } from 'kysely';

/** The balance, in paise, a test twin opens with (and a reset returns to by default). */
const OPENING_TEST_BALANCE_PAISE = 1_000_000;

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE orgs ADD COLUMN live_org_id uuid UNIQUE REFERENCES orgs (id)`.execute(db);
  await sql`ALTER TABLE orgs ADD CONSTRAINT orgs_twin_not_self CHECK (live_org_id <> id)`.execute(db);

  await sql`ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_kind_check`.execute(db);
  await sql`ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check
            CHECK (kind IN ('top_up', 'hold', 'release', 'charge', 'reset'))`.execute(db);

  await sql`
    CREATE FUNCTION org_add_test_twin(p_org uuid) RETURNS uuid LANGUAGE plpgsql AS $$
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
  await sql`
    CREATE FUNCTION orgs_make_test_twin() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM org_add_test_twin(NEW.id);
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER orgs_make_test_twin AFTER INSERT ON orgs
    FOR EACH ROW WHEN (NEW.live_org_id IS NULL) EXECUTE FUNCTION orgs_make_test_twin()`.execute(db);
  await sql`
    CREATE FUNCTION orgs_copy_to_test_twin() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE orgs SET name = NEW.name, plan_id = NEW.plan_id, default_from_e164 = NEW.default_from_e164
      WHERE live_org_id = NEW.id;
      RETURN NULL;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER orgs_copy_to_test_twin AFTER UPDATE OF name, plan_id, default_from_e164 ON orgs
    FOR EACH ROW WHEN (NEW.live_org_id IS NULL) EXECUTE FUNCTION orgs_copy_to_test_twin()`.execute(db);
  await sql`SELECT org_add_test_twin(id) FROM orgs WHERE live_org_id IS NULL`.execute(db);

  // An event's mode is its org's, stamped as it is written, so readers need no join.
  await sql`ALTER TABLE events ADD COLUMN livemode boolean NOT NULL DEFAULT true`.execute(db);
  await sql`
    CREATE FUNCTION events_stamp_mode() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.livemode := (SELECT live_org_id IS NULL FROM orgs WHERE id = NEW.org_id);
      RETURN NEW;
    END $$`.execute(db);
  await sql`
    CREATE TRIGGER events_stamp_mode BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION events_stamp_mode()`.execute(db);

  await sql`ALTER TABLE audit_log ADD COLUMN livemode boolean NOT NULL DEFAULT true`.execute(db);
}

// Undoing keeps the twins (and whatever test data they hold) as ordinary orgs; nothing is deleted.
export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE audit_log DROP COLUMN livemode`.execute(db);
  await sql`DROP TRIGGER events_stamp_mode ON events`.execute(db);
  await sql`DROP FUNCTION events_stamp_mode()`.execute(db);
  await sql`ALTER TABLE events DROP COLUMN livemode`.execute(db);
  await sql`DROP TRIGGER orgs_copy_to_test_twin ON orgs`.execute(db);
  await sql`DROP FUNCTION orgs_copy_to_test_twin()`.execute(db);
  await sql`DROP TRIGGER orgs_make_test_twin ON orgs`.execute(db);
  await sql`DROP FUNCTION orgs_make_test_twin()`.execute(db);
  await sql`DROP FUNCTION org_add_test_twin(uuid)`.execute(db);
  await sql`ALTER TABLE orgs DROP COLUMN live_org_id`.execute(db);
  await sql`ALTER TABLE credit_ledger DROP CONSTRAINT credit_ledger_kind_check`.execute(db);
  await sql`ALTER TABLE credit_ledger ADD CONSTRAINT credit_ledger_kind_check
            CHECK (kind IN ('top_up', 'hold', 'release', 'charge')) NOT VALID`.execute(db);
}
