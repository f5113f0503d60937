// Server-side sessions: the cookie carries a random id, the database its hash, the user, a CSRF token,
// the last time it was used (idle timeout) and its absolute end. Sign-in is throttled per account and
// per client address in the database, so the limit holds across processes.
import type { Db } from '../database/connect.js';
import { recordAudit } from '../audit/service.js';
import { UNMATCHABLE_HASH, verifyPassword } from './passwords.js';
import { hashToken, newToken } from './tokens.js';
import {
  MAX_PASSWORD_LENGTH,
  SESSION_TOUCH_MS,
  SIGN_IN_FAILURE_WINDOW_MS,
  SIGN_IN_FAILURES_PER_ACCOUNT,
  SIGN_IN_FAILURES_PER_ADDRESS,
} from './policy.js';
import * as users from './queries.js';

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
  role: users.Role;
  orgId: string;
  orgName: string;
}

/** What a sign-in attempt came to. */
export type SignInResult =
  { kind: 'signed_in'; token: string; session: Session } | { kind: 'refused' } | { kind: 'throttled' };

/**
 * Whether the account or the address is over its failures, counting the attempt under way: its failure
 * is written before the password is checked (and removed if it turns out not to be one), so attempts
 * sent together all count against each other instead of each seeing the same earlier count.
 */
async function throttled(db: Db, email: string, address: string, now: Date): Promise<boolean> {
  const since = new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS);
  const [account, client] = await Promise.all([
    users.countFailures(db, `account:${email}`, since, SIGN_IN_FAILURES_PER_ACCOUNT + 1),
    users.countFailures(db, `address:${address}`, since, SIGN_IN_FAILURES_PER_ADDRESS + 1),
  ]);
  return account > SIGN_IN_FAILURES_PER_ACCOUNT || client > SIGN_IN_FAILURES_PER_ADDRESS;
}

/**
 * Starts a session for a user and returns the cookie value (a new id each time); the sign-in's audit
 * entry, from `address`, commits with it.
 */
export async function startSession(
  db: Db,
  user: users.UserRow,
  lifetimes: SessionLifetimes,
  now: Date,
  address: string | null,
): Promise<{ token: string; session: Session }> {
  const token = newToken();
  const csrfToken = newToken();
  const idHash = hashToken(token);
  return db.transaction().execute(async (trx) => {
    await users.insertSession(trx, {
      idHash,
      userId: user.id,
      csrfToken,
      now,
      expiresAt: new Date(now.getTime() + lifetimes.absoluteMs),
    });
    await recordAudit(trx, { orgId: user.org_id, actor: user.email, action: 'sign_in', address, at: now });
    const live = (await users.findLiveSession(trx, idHash, now, new Date(now.getTime() - lifetimes.idleMs)))!;
    return { token, session: toSession(live) };
  });
}

/**
 * Checks an email and password. A wrong email and a wrong password get the same answer after the same
 * work (a password hash is always checked); an account or address over its failures gets `throttled`.
 */
export async function signIn(
  db: Db,
  input: { email: string; password: string; address: string },
  lifetimes: SessionLifetimes,
  now = new Date(),
): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const password = input.password.slice(0, MAX_PASSWORD_LENGTH + 1);
  // Counted as a failure until the password is found right (see throttled).
  const attempt = await users.insertFailures(db, [`account:${email}`, `address:${input.address}`], now);
  const [user, isThrottled] = await Promise.all([
    users.findUserByEmail(db, email),
    throttled(db, email, input.address, now),
  ]);
  const matches = await verifyPassword(password, user?.password_hash ?? UNMATCHABLE_HASH);
  if (isThrottled) {
    // A refused attempt checks nothing, so it is not a failure of its own.
    await users.deleteFailures(db, attempt);
    return { kind: 'throttled' };
  }
  if (!user || !matches) {
    await recordAudit(db, {
      orgId: user?.org_id ?? null,
      actor: email.slice(0, 320),
      action: 'sign_in.failed',
      address: input.address,
      at: now,
    });
    return { kind: 'refused' };
  }
  await users.deleteFailures(db, attempt);
  const { token, session } = await startSession(db, user, lifetimes, now, input.address);
  return { kind: 'signed_in', token, session };
}

function toSession(row: NonNullable<Awaited<ReturnType<typeof users.findLiveSession>>>): Session {
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

/** The live session for a cookie value (used now, so its idle time restarts), or null. */
export async function loadSession(
  db: Db,
  token: string,
  lifetimes: SessionLifetimes,
  now = new Date(),
): Promise<Session | null> {
  const idHash = hashToken(token);
  const row = await users.findLiveSession(db, idHash, now, new Date(now.getTime() - lifetimes.idleMs));
  if (!row) return null;
  if (now.getTime() - row.last_seen_at.getTime() >= SESSION_TOUCH_MS) await users.touchSession(db, idHash, now);
  return toSession(row);
}

/** Ends a session on the server. */
export async function endSession(db: Db, session: Session): Promise<void> {
  await users.deleteSession(db, session.idHash);
}

/** Removes expired sessions and links and failures past their window; returns how many rows went. */
export async function pruneDashboardState(db: Db, lifetimes: SessionLifetimes, now: Date): Promise<number> {
  return users.deleteExpired(
    db,
    now,
    new Date(now.getTime() - lifetimes.idleMs),
    new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS),
  );
}
