// A dashboard email is unique within an org, no longer across orgs: inviting an address answers the
// same whether or not it belongs to someone in another org, and no org can squat it.
// Each membership keeps its own password; sign-in finds them by email (indexed).
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE dashboard_users DROP CONSTRAINT dashboard_users_email_key`.execute(db);
  await db.schema
    .alterTable('dashboard_users')
    .addUniqueConstraint('dashboard_users_org_email_key', ['org_id', 'email'])
    .execute();
  await db.schema.createIndex('dashboard_users_email_idx').on('dashboard_users').column('email').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('dashboard_users_email_idx').execute();
  await db.schema.alterTable('dashboard_users').dropConstraint('dashboard_users_org_email_key').execute();
  await db.schema.alterTable('dashboard_users').addUniqueConstraint('dashboard_users_email_key', ['email']).execute();
}
