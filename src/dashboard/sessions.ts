// Server-side sessions: the cookie carries a random id, the database its hash, the user, a CSRF token,
// the last time it was used (idle timeout) and its absolute end. Failed sign-ins are counted in the
// database (so the limits hold across processes) per account from one address, per address, and per
// account from everywhere only as a far higher last resort, so failures from elsewhere cannot lock a
// person out; password hashes take a place in the process's bounded pool.
import type { Db } from '../database/connect.js';
import { recordAudit } from '../audit/service.js';
import { UNMATCHABLE_HASH, verifyPassword } from './passwords.js';
import { hashToken, newToken } from './tokens.js';
import {
  MAX_ORGS_PER_EMAIL,
  MAX_PASSWORD_LENGTH,
  SESSION_TOUCH_MS,
  SIGN_IN_FAILURE_WINDOW_MS,
  SIGN_IN_FAILURES_PER_ACCOUNT,
  SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS,
  SIGN_IN_FAILURES_PER_ADDRESS,
} from './policy.js';
import type { HashPool, HashTurn } from './hash-pool.js';
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
  | { kind: 'signed_in'; token: string; session: Session }
  | { kind: 'refused' }
  | { kind: 'throttled' }
  | { kind: 'busy' };

/** The counters one attempt is held against: the account from this address, the address, the account. */
function failureSubjects(email: string, address: string) {
  return {
    accountAddress: `account-address:${email} ${address}`,
    address: `address:${address}`,
    account: `account:${email}`,
  };
}

/** Which limit an attempt is over, the narrowest first, or null. */
type Limit = 'account_address' | 'address' | 'account' | null;

/**
 * Which limit the attempt is over, counting the attempt under way: its failure is written before the
 * password is checked (and removed if it turns out not to be one), so attempts sent together all count
 * against each other instead of each seeing the same earlier count.
 */
async function overLimit(db: Db, subjects: ReturnType<typeof failureSubjects>, now: Date): Promise<Limit> {
  const since = new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS);
  const [accountAddress, client, account] = await Promise.all([
    users.countFailures(db, subjects.accountAddress, since, SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS + 1),
    users.countFailures(db, subjects.address, since, SIGN_IN_FAILURES_PER_ADDRESS + 1),
    users.countFailures(db, subjects.account, since, SIGN_IN_FAILURES_PER_ACCOUNT + 1),
  ]);
  if (accountAddress > SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS) return 'account_address';
  if (client > SIGN_IN_FAILURES_PER_ADDRESS) return 'address';
  if (account > SIGN_IN_FAILURES_PER_ACCOUNT) return 'account';
  return null;
}

/**
 * Audits that an account reached its ceiling of failures from all addresses, once per window: each refusal
 * leaves a mark, and only the refusal whose mark is the window's first writes the entry.
 */
async function auditAccountCeiling(
  db: Db,
  email: string,
  orgIds: (string | null)[],
  address: string,
  now: Date,
): Promise<void> {
  const subject = `account-ceiling:${email}`;
  const [mark] = await users.insertFailures(db, [subject], now);
  const first = await users.firstFailureId(db, subject, new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS));
  if (first !== mark) return;
  for (const orgId of orgIds) {
    await recordAudit(db, {
      orgId,
      actor: email.slice(0, 320),
      action: 'sign_in.account_throttled',
      target: `over ${SIGN_IN_FAILURES_PER_ACCOUNT} failed sign-ins from all addresses in 15 minutes`,
      address,
      at: now,
    });
  }
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
 * The oldest of an email's memberships whose own password is `password`, each checked in its turn in
 * the pool; an email with no password set anywhere costs one hash all the same, so its answer takes as
 * long as a wrong password's.
 */
async function matchingMember(turn: HashTurn, members: users.UserRow[], password: string) {
  const candidates = members.filter((member) => member.password_hash !== null).slice(0, MAX_ORGS_PER_EMAIL);
  if (candidates.length === 0) {
    await turn.run(() => verifyPassword(password, UNMATCHABLE_HASH));
    return undefined;
  }
  for (const candidate of candidates) {
    if (await turn.run(() => verifyPassword(password, candidate.password_hash!))) return candidate;
  }
  return undefined;
}

/**
 * Checks an email and password. An attempt finding no place among the process's password hashes is
 * `busy` at once, one over a limit of failures `throttled` before any hash; otherwise a wrong email and
 * a wrong password get the same answer after the same work (a password hash is always checked). An
 * address in several orgs signs in to the oldest membership whose password it is.
 */
export async function signIn(
  db: Db,
  hashes: HashPool,
  input: { email: string; password: string; address: string },
  lifetimes: SessionLifetimes,
  now = new Date(),
): Promise<SignInResult> {
  const email = input.email.trim().toLowerCase();
  const password = input.password.slice(0, MAX_PASSWORD_LENGTH + 1);
  const turn = hashes.admit(input.address);
  if (!turn) return { kind: 'busy' };
  try {
    const subjects = failureSubjects(email, input.address);
    // Counted as a failure until the password is found right (see overLimit).
    const attempt = await users.insertFailures(db, Object.values(subjects), now);
    const [members, limit] = await Promise.all([users.findUsersByEmail(db, email), overLimit(db, subjects, now)]);
    // Only the org of an address's sole membership logs its failures: with several, the attempt cannot
    // be told apart, and another org that invited the address must not read this one's sign-ins.
    const orgIds = [members.length === 1 ? members[0]!.org_id : null];
    if (limit) {
      // A refused attempt checks nothing, so it is not a failure of its own.
      await users.deleteFailures(db, attempt);
      if (limit === 'account') await auditAccountCeiling(db, email, orgIds, input.address, now);
      return { kind: 'throttled' };
    }
    const user = await matchingMember(turn, members, password);
    turn.leave();
    if (!user) {
      for (const orgId of orgIds) {
        await recordAudit(db, {
          orgId,
          actor: email.slice(0, 320),
          action: 'sign_in.failed',
          address: input.address,
          at: now,
        });
      }
      return { kind: 'refused' };
    }
    await users.deleteFailures(db, attempt);
    const { token, session } = await startSession(db, user, lifetimes, now, input.address);
    return { kind: 'signed_in', token, session };
  } finally {
    turn.leave();
  }
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
