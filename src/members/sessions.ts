// Server-side sessions: the cookie carries a random id, the database its hash, the user, a CSRF token,
// the last time it was used (idle timeout) and its absolute end.
import type { Db } from '../database/connect.js';
import { recordAudit } from '../audit/service.js';
import { hashToken, newToken } from './tokens.js';
import { SESSION_TOUCH_MS } from './policy.js';
import { deleteExpiredLinks } from './link-queries.js';
import { pruneFailures } from './sign-in-throttle.js';
import type { Role, UserRow } from './queries.js';
import * as sessions from './session-queries.js';

/** How long sessions last: without use, and at most. */
export interface SessionLifetimes {
  idleMs: number;
  absoluteMs: number;
}

/** A signed-in person as a page sees them. */
export interface Session {
  idHash: string;
  csrfToken: string;
  userId: string;
  email: string;
  role: Role;
  orgId: string;
  orgName: string;
}

function toSession(row: NonNullable<Awaited<ReturnType<typeof sessions.findLiveSession>>>): Session {
  return {
    idHash: row.id_hash,
    csrfToken: row.csrf_token,
    userId: row.user_id,
    email: row.email,
    role: row.role,
    orgId: row.org_id,
    orgName: row.org_name,
  };
}

/**
 * Starts a session for a user and returns the cookie value (a new id each time); the sign-in's audit
 * entry, from `address`, commits with it.
 */
export async function startSession(
  db: Db,
  user: UserRow,
  lifetimes: SessionLifetimes,
  now: Date,
  address: string | null,
): Promise<{ token: string; session: Session }> {
  const token = newToken();
  const csrfToken = newToken();
  const idHash = hashToken(token);
  return db.transaction().execute(async (trx) => {
    await sessions.insertSession(trx, {
      idHash,
      userId: user.id,
      csrfToken,
      now,
      expiresAt: new Date(now.getTime() + lifetimes.absoluteMs),
    });
    await recordAudit(trx, { orgId: user.org_id, actor: user.email, action: 'sign_in', address, at: now });
    const live = (await sessions.findLiveSession(trx, idHash, now, new Date(now.getTime() - lifetimes.idleMs)))!;
    return { token, session: toSession(live) };
  });
}

/** The live session for a cookie value (used now, so its idle time restarts), or null. */
export async function loadSession(
  db: Db,
  token: string,
  lifetimes: SessionLifetimes,
  now = new Date(),
): Promise<Session | null> {
  const idHash = hashToken(token);
  const row = await sessions.findLiveSession(db, idHash, now, new Date(now.getTime() - lifetimes.idleMs));
  if (!row) return null;
  const touchEveryMs = Math.min(SESSION_TOUCH_MS, lifetimes.idleMs / 10);
  if (now.getTime() - row.last_seen_at.getTime() >= touchEveryMs) await sessions.touchSession(db, idHash, now);
  return toSession(row);
}

/** Ends a session on the server. */
export async function endSession(db: Db, session: Session): Promise<void> {
  await sessions.deleteSession(db, session.idHash);
}

/** Removes expired sessions and links and failures past their window; returns how many rows went. */
export async function pruneDashboardState(db: Db, lifetimes: SessionLifetimes, now: Date): Promise<number> {
  const ended = await sessions.deleteExpiredSessions(db, now, new Date(now.getTime() - lifetimes.idleMs));
  const links = await deleteExpiredLinks(db, now);
  const failures = await pruneFailures(db, now);
  return Number(ended + links + failures);
}
