// SQL for dashboard sessions (dashboard_sessions), stored by their id's hash.
import type { Db } from '../database/connect.js';

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

/** Removes the sessions past their end or idle since `idleSince`; returns how many went. */
export async function deleteExpiredSessions(db: Db, now: Date, idleSince: Date): Promise<bigint> {
  const sessions = await db
    .deleteFrom('dashboard_sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', idleSince)]))
    .executeTakeFirst();
  return sessions.numDeletedRows;
}
