// Campaigns: an org's batch of contacts to be called by one agent inside calling windows, a few at a
// time, with retries. `campaigns` holds the plan and the state; `campaign_contacts` holds one row per
// contact chosen at creation (its number copied, so later edits to the contact book change nothing),
// with its attempts, the last call and the outcome. A campaign's calls are ordinary calls that name the
// campaign, the contact and the attempt; one unique index on calls and one on placements make each
// (campaign, contact, attempt) dialed at most once, whatever the workers do.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    CREATE TABLE campaigns (
      id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
      org_id uuid NOT NULL REFERENCES orgs (id) ON DELETE CASCADE,
      agent_id uuid NOT NULL REFERENCES agents (id),
      name text NOT NULL,
      status text NOT NULL DEFAULT 'scheduled'
        CHECK (status IN ('scheduled', 'running', 'paused', 'completed', 'canceled')),
      paused_reason text CHECK (paused_reason IN ('requested', 'insufficient_credits')),
      starts_at timestamptz NOT NULL,
      ends_at timestamptz,
      timezone text NOT NULL,
      windows jsonb NOT NULL,
      max_concurrency integer NOT NULL CHECK (max_concurrency BETWEEN 1 AND 1000),
      max_attempts smallint NOT NULL CHECK (max_attempts BETWEEN 1 AND 5),
      retry_on text[] NOT NULL DEFAULT '{}',
      retry_failed_reasons text[] NOT NULL DEFAULT '{}',
      retry_interval_sec integer NOT NULL CHECK (retry_interval_sec >= 60),
      contact_selection jsonb NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}',
      contacts_total integer NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      finished_at timestamptz,
      CHECK ((status = 'paused') = (paused_reason IS NOT NULL)),
      CHECK (ends_at IS NULL OR ends_at > starts_at)
    )`.execute(db);
  await sql`CREATE INDEX campaigns_org_newest_idx ON campaigns (org_id, created_at DESC, id DESC)`.execute(db);
  // The dispatcher's sweep: campaigns that may have work.
  await sql`CREATE INDEX campaigns_active_idx ON campaigns (status) WHERE status IN ('scheduled', 'running')`.execute(
    db,
  );

  await sql`
    CREATE TABLE campaign_contacts (
      campaign_id uuid NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
      contact_id uuid NOT NULL,
      org_id uuid NOT NULL,
      position integer NOT NULL,
      phone_e164 text NOT NULL,
      consent_capture text NOT NULL,
      state text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'calling', 'completed', 'failed', 'no_answer', 'busy', 'skipped', 'expired', 'canceled')),
      skip_reason text CHECK (skip_reason IN ('suppressed', 'consent_excluded')),
      attempts smallint NOT NULL DEFAULT 0,
      last_call_id uuid,
      last_outcome text,
      last_reason text,
      next_attempt_at timestamptz,
      claimed_until timestamptz,
      updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (campaign_id, contact_id),
      CHECK ((state = 'skipped') = (skip_reason IS NOT NULL))
    )`.execute(db);
  await sql`CREATE UNIQUE INDEX campaign_contacts_position_idx ON campaign_contacts (campaign_id, position)`.execute(
    db,
  );
  // The next contacts due, in list order.
  await sql`
    CREATE INDEX campaign_contacts_due_idx ON campaign_contacts (campaign_id, next_attempt_at, position)
    WHERE state = 'pending'`.execute(db);
  // The contacts being called: the campaign's concurrency and the settling of ended attempts.
  await sql`CREATE INDEX campaign_contacts_calling_idx ON campaign_contacts (campaign_id) WHERE state = 'calling'`.execute(
    db,
  );

  for (const table of ['calls', 'call_placements']) {
    await sql`ALTER TABLE ${sql.table(table)}
              ADD COLUMN campaign_id uuid,
              ADD COLUMN campaign_contact_id uuid,
              ADD COLUMN campaign_attempt smallint,
              ADD CHECK ((campaign_id IS NULL) = (campaign_contact_id IS NULL)
                         AND (campaign_id IS NULL) = (campaign_attempt IS NULL))`.execute(db);
    await sql`CREATE UNIQUE INDEX ${sql.id(`${table}_campaign_attempt_idx`)}
              ON ${sql.table(table)} (campaign_id, campaign_contact_id, campaign_attempt)
              WHERE campaign_id IS NOT NULL`.execute(db);
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['calls', 'call_placements']) {
    await sql`DROP INDEX ${sql.id(`${table}_campaign_attempt_idx`)}`.execute(db);
    await sql`ALTER TABLE ${sql.table(table)}
              DROP COLUMN campaign_id, DROP COLUMN campaign_contact_id, DROP COLUMN campaign_attempt`.execute(db);
  }
  await sql`DROP TABLE campaign_contacts`.execute(db);
  await sql`DROP TABLE campaigns`.execute(db);
}
