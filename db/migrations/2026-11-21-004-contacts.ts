// Contacts: one row per (org, phone number), with list indexes for newest-first paging and the consent filter.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('contacts')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id'))
    .addColumn('phone_e164', 'text', (c) => c.notNull())
    .addColumn('name', 'text')
    .addColumn('email', 'text')
    .addColumn('language_pref', 'text')
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('consent_capture', 'text', (c) =>
      c.notNull().check(sql`consent_capture IN ('pre_call', 'website_form', 'manual', 'imported')`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addUniqueConstraint('contacts_org_phone_key', ['org_id', 'phone_e164'])
    .execute();
  await sql`CREATE INDEX contacts_org_newest_idx ON contacts (org_id, created_at DESC, id DESC)`.execute(db);
  await sql`CREATE INDEX contacts_org_consent_newest_idx ON contacts (org_id, consent_capture, created_at DESC, id DESC)`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('contacts').execute();
}
