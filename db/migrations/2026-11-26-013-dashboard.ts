// The dashboard: its people (one org each, a role), one-time invite and reset links, server-side sessions,
// the sign-in failures that throttle guessing, and the audit log of changes made from the dashboard and
// the CLI. API keys learn a label, who made them and when they were last used.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dashboard_users')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('org_id', 'uuid', (c) => c.notNull().references('orgs.id').onDelete('cascade'))
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role IN ('admin', 'viewer')`))
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('dashboard_users_org_idx').on('dashboard_users').column('org_id').execute();

  await db.schema
    .createTable('dashboard_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('dashboard_users.id').onDelete('cascade'))
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose IN ('invite', 'reset')`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('dashboard_links_user_idx').on('dashboard_links').column('user_id').execute();

  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('dashboard_users.id').onDelete('cascade'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_seen_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dashboard_sessions_user_idx').on('dashboard_sessions').column('user_id').execute();

  await db.schema
    .createTable('dashboard_sign_in_failures')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('dashboard_sign_in_failures_subject_idx')
    .on('dashboard_sign_in_failures')
    .columns(['subject', 'at'])
    .execute();

  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('org_id', 'uuid', (c) => c.references('orgs.id').onDelete('cascade'))
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target', 'text')
    .addColumn('address', 'text')
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('audit_log_org_idx').on('audit_log').columns(['org_id', 'id']).execute();
  await db.schema.createIndex('audit_log_at_idx').on('audit_log').column('at').execute();

  await db.schema
    .alterTable('api_keys')
    .addColumn('label', 'text')
    .addColumn('created_by', 'text')
    .addColumn('last_used_at', 'timestamptz')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    .dropColumn('label')
    .dropColumn('created_by')
    .dropColumn('last_used_at')
    .execute();
  await db.schema.dropTable('audit_log').execute();
  await db.schema.dropTable('dashboard_sign_in_failures').execute();
  await db.schema.dropTable('dashboard_sessions').execute();
  await db.schema.dropTable('dashboard_links').execute();
  await db.schema.dropTable('dashboard_users').execute();
}
