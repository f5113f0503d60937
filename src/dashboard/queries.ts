// SQL for the dashboard's people, one-time links, sessions and failed sign-ins.
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

/** Clears a user's password: they cannot sign in until they set one through a link. */
export async function clearPasswordHash(db: Db, id: string): Promise<void> {
  await db.updateTable('dashboard_users').set({ password_hash: null }).where('id', '=', id).execute();
}

/** Stores a one-time link by its token's hash. */
export async function insertLink(
  db: Db,
  link: { tokenHash: string; userId: string; purpose: 'invite' | 'reset'; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('dashboard_links')
    .values({ token_hash: link.tokenHash, user_id: link.userId, purpose: link.purpose, expires_at: link.expiresAt })
    .execute();
}

/** The unused, unexpired link with this token hash, with its user; undefined otherwise. */
export async function findUsableLink(db: Db, tokenHash: string, now: Date) {
  return db
    .selectFrom('dashboard_links')
    .innerJoin('dashboard_users', 'dashboard_users.id', 'dashboard_links.user_id')
    .select([
      'dashboard_links.token_hash',
      'dashboard_links.purpose',
      'dashboard_users.id as user_id',
      'dashboard_users.email',
    ])
    .where('dashboard_links.token_hash', '=', tokenHash)
    .where('dashboard_links.used_at', 'is', null)
    .where('dashboard_links.expires_at', '>', now)
    .executeTakeFirst();
}

/** Marks the link used, if it still is usable; false when another request used it first. */
export async function useLink(db: Db, tokenHash: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Voids every unused link of a user (a new reset replaces older links). */
export async function voidLinks(db: Db, userId: string, now: Date): Promise<void> {
  await db
    .updateTable('dashboard_links')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

/** Stores a new session. */
export async function insertSession(
  db: Db,
  session: { idHash: string; userId: string; csrfToken: string; now: Date; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('dashboard_sessions')
    .values({
      id_hash: session.idHash,
      user_id: session.userId,
      csrf_token: session.csrfToken,
      created_at: session.now,
      last_seen_at: session.now,
      expires_at: session.expiresAt,
    })
    .execute();
}

/** The session with this id hash, with its user and org, when it is seen after `idleSince` and before its end. */
export async function findLiveSession(db: Db, idHash: string, now: Date, idleSince: Date) {
  return db
    .selectFrom('dashboard_sessions')
    .innerJoin('dashboard_users', 'dashboard_users.id', 'dashboard_sessions.user_id')
    .innerJoin('orgs', 'orgs.id', 'dashboard_users.org_id')
    .select([
      'dashboard_sessions.id_hash',
      'dashboard_sessions.csrf_token',
      'dashboard_sessions.last_seen_at',
      'dashboard_users.id as user_id',
      'dashboard_users.email',
      'dashboard_users.role',
      'dashboard_users.org_id',
      'orgs.name as org_name',
    ])
    .where('dashboard_sessions.id_hash', '=', idHash)
    .where('dashboard_sessions.expires_at', '>', now)
    .where('dashboard_sessions.last_seen_at', '>', idleSince)
    .executeTakeFirst();
}

/** Records that the session was used now. */
export async function touchSession(db: Db, idHash: string, now: Date): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
}

/** Ends one session. */
export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute();
}

/** Ends every session of a user. */
export async function deleteUserSessions(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('user_id', '=', userId).execute();
}

/** Records failed sign-ins against each subject. */
export async function insertFailures(db: Db, subjects: string[], at: Date): Promise<string[]> {
  const rows = await db
    .insertInto('dashboard_sign_in_failures')
    .values(subjects.map((subject) => ({ subject, at })))
    .returning('id')
    .execute();
  return rows.map((row) => String(row.id));
}

/** Removes the failures `insertFailures` wrote under `ids`. */
export async function deleteFailures(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('dashboard_sign_in_failures').where('id', 'in', ids).execute();
}

/** How many failures `subject` has had since `since`, counting at most `cap`. */
export async function countFailures(db: Db, subject: string, since: Date, cap: number): Promise<number> {
  const rows = await db
    .selectFrom('dashboard_sign_in_failures')
    .select('id')
    .where('subject', '=', subject)
    .where('at', '>', since)
    .limit(cap)
    .execute();
  return rows.length;
}

/** The id of `subject`'s first failure since `since` (ids grow with insertion), or undefined when none. */
export async function firstFailureId(db: Db, subject: string, since: Date): Promise<string | undefined> {
  const row = await db
    .selectFrom('dashboard_sign_in_failures')
    .select('id')
    .where('subject', '=', subject)
    .where('at', '>', since)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  // int8 columns are read as numbers (see database/connect.ts); ids are compared in insertFailures' form.
  return row === undefined ? undefined : String(row.id);
}

/** Removes sessions, links and failures past their use; returns how many rows went. */
export async function deleteExpired(db: Db, now: Date, idleSince: Date, failuresSince: Date): Promise<number> {
  const sessions = await db
    .deleteFrom('dashboard_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
    .executeTakeFirst();
  const links = await db.deleteFrom('dashboard_links').where('expires_at', '<=', now).executeTakeFirst();
  const failures = await db
    .deleteFrom('dashboard_sign_in_failures')
    .where('at', '<=', failuresSince)
    .executeTakeFirst();
  return Number(sessions.numDeletedRows + links.numDeletedRows + failures.numDeletedRows);
}

/** PostgreSQL's SQLSTATE for a row whose referenced row does not exist. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Records a one-time form's nonce as used in the session: `claimed`, or `used` when it already was, or
 * `no_session` when the session ended meanwhile.
 */
export async function claimFormUse(
  db: Db,
  sessionIdHash: string,
  nonce: string,
  now: Date,
): Promise<'claimed' | 'used' | 'no_session'> {
  try {
    const row = await db
      .insertInto('dashboard_form_uses')
      .values({ session_id_hash: sessionIdHash, nonce, used_at: now })
      .onConflict((conflict) => conflict.columns(['session_id_hash', 'nonce']).doNothing())
      .returning('nonce')
      .executeTakeFirst();
    return row ? 'claimed' : 'used';
  } catch (error) {
    if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) return 'no_session';
    throw error;
  }
}

/** Forgets a nonce's use, so the form it came with may be sent again (its change was not made). */
export async function releaseFormUse(db: Db, sessionIdHash: string, nonce: string): Promise<void> {
  await db
    .deleteFrom('dashboard_form_uses')
    .where('session_id_hash', '=', sessionIdHash)
    .where('nonce', '=', nonce)
    .execute();
}
