// SQL for the members feature's people (dashboard_users).
import type { Selectable } from 'kysely';
import type { DashboardUsersTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';

/** A dashboard user as stored. */
export type UserRow = Selectable<DashboardUsersTable>;
/** A role in an org. */
export type Role = DashboardUsersTable['role'];

/** Adds a user without a password; undefined when the org already has one with this email. */
export async function insertUser(db: Db, user: { orgId: string; email: string; role: Role }) {
  return db
    .insertInto('dashboard_users')
    .values({ org_id: user.orgId, email: user.email, role: user.role })
    .onConflict((conflict) => conflict.columns(['org_id', 'email']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** The users with this email (lowercased by the caller), one per org, oldest first. */
export async function findUsersByEmail(db: Db, email: string): Promise<UserRow[]> {
  return db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('email', '=', email)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The user with this id. */
export async function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('dashboard_users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The org's user with this id. */
export async function findUserInOrg(db: Db, orgId: string, id: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('dashboard_users')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The org's users, oldest first. */
export async function listUsers(db: Db, orgId: string): Promise<UserRow[]> {
  return db.selectFrom('dashboard_users').selectAll().where('org_id', '=', orgId).orderBy('created_at').execute();
}

/** The org's users, locked against change until the transaction ends (in id order, so lockers queue). */
export async function lockOrgUsers(db: Db, orgId: string): Promise<UserRow[]> {
  return db.selectFrom('dashboard_users').selectAll().where('org_id', '=', orgId).orderBy('id').forUpdate().execute();
}

/** Removes a user (with their links and sessions); false when there was none. */
export async function deleteUser(db: Db, id: string): Promise<boolean> {
  const result = await db.deleteFrom('dashboard_users').where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Sets a user's password hash. */
export async function setPasswordHash(db: Db, id: string, passwordHash: string): Promise<void> {
  await db.updateTable('dashboard_users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

/** Sets a user's role. */
export async function setRole(db: Db, id: string, role: Role): Promise<void> {
  await db.updateTable('dashboard_users').set({ role }).where('id', '=', id).execute();
}

/** Clears a user's password: they cannot sign in until they set one through a link. */
export async function clearPasswordHash(db: Db, id: string): Promise<void> {
  await db.updateTable('dashboard_users').set({ password_hash: null }).where('id', '=', id).execute();
}
