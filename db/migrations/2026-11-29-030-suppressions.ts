// The do-not-call list: one row per (org, phone number) that must not be dialed, with why, who added it
// (the API or the dashboard) and when. Test keys write their org's test twin's rows, so the two modes keep
// separate lists. The list pages newest first; `id` names an entry for the API's cursors.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('suppressions')
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('phone_e164', 'text', (c) => c.notNull())
    .addColumn('id', 'uuid', (c) =>
      c
        .notNull()
        .unique()
        .defaultTo(sql`gen_random_uuid()`),
    )
    .addColumn('reason', 'text', (c) =>
      c.notNull().check(sql`reason IN ('opted_out', 'do_not_call_registry', 'complaint', 'wrong_number', 'other')`),
    )
    .addColumn('note', 'text')
    .addColumn('created_by', 'text', (c) => c.notNull().check(sql`created_by IN ('api', 'dashboard')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`clock_timestamp()`))
    .addPrimaryKeyConstraint('suppressions_pkey', ['org_id', 'phone_e164'])
    .execute();
  await sql`CREATE INDEX suppressions_org_newest_idx ON suppressions (org_id, created_at DESC, id DESC)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('suppressions').execute();
}
