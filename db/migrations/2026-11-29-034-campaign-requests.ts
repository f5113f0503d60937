// What POST /campaigns needs beyond migration 033: the consent values a campaign excludes (its contacts
// with one of them are skipped from the start), and the Idempotency-Key it was created with and a hash
// of its body, so a retry with the same key finds it. A key is unique among the org's campaigns; once it
// is older than the idempotency window a new request with it takes it over (the old campaign keeps none).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    ALTER TABLE campaigns
      ADD COLUMN exclude_consent_capture text[] NOT NULL DEFAULT '{}',
      ADD COLUMN idempotency_key text,
      ADD COLUMN request_hash text,
      ADD CHECK ((idempotency_key IS NULL) = (request_hash IS NULL))`.execute(db);
  await sql`
    CREATE UNIQUE INDEX campaigns_idempotency_key_idx ON campaigns (org_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX campaigns_idempotency_key_idx`.execute(db);
  await sql`ALTER TABLE campaigns DROP COLUMN exclude_consent_capture, DROP COLUMN idempotency_key, DROP COLUMN request_hash`.execute(
    db,
  );
}
