// Signing in with an email and password: the attempt takes a place in the process's bounded pool of
// password hashes, is held against the sign-in throttle's limits, and on success starts a session.
import type { Db } from '../database/connect.js';
import { recordAudit } from '../audit/service.js';
import { HashPool, type HashTurn } from './hash-pool.js';
import { UNMATCHABLE_HASH, verifyPassword } from './passwords.js';
import {
  MAX_ORGS_PER_EMAIL,
  MAX_PASSWORD_LENGTH,
  SIGN_IN_HASH_MAX_WAIT_MS,
  SIGN_IN_HASHES_AT_ONCE,
  SIGN_IN_HASHES_PER_ADDRESS,
  SIGN_IN_HASHES_WAITING,
} from './policy.js';
import { findUsersByEmail, type UserRow } from './queries.js';
import { startSession, type Session, type SessionLifetimes } from './sessions.js';
import { auditAccountCeiling, countAttempt, forgetAttempt, overLimit } from './sign-in-throttle.js';

/** What a sign-in attempt came to. */
export type SignInResult =
  | { kind: 'signed_in'; token: string; session: Session }
  | { kind: 'refused' }
  | { kind: 'throttled' }
  | { kind: 'busy' };

/** A process's pool of sign-in password hashes, sized by the feature's policy. */
export function signInHashPool(): HashPool {
  return new HashPool({
    atOnce: SIGN_IN_HASHES_AT_ONCE,
    waiting: SIGN_IN_HASHES_WAITING,
    perAddress: SIGN_IN_HASHES_PER_ADDRESS,
    maxWaitMs: SIGN_IN_HASH_MAX_WAIT_MS,
  });
}

/**
 * The oldest of an email's memberships whose own password is `password`, each checked in its turn in
 * the pool; an email with no password set anywhere costs one hash all the same, so its answer takes as
 * long as a wrong password's.
 */
async function matchingMember(turn: HashTurn, members: UserRow[], password: string) {
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
    const attempt = await countAttempt(db, email, input.address, now);
    const [members, limit] = await Promise.all([findUsersByEmail(db, email), overLimit(db, attempt, now)]);
    // Only the org of an address's sole membership logs its failures: with several, the attempt cannot
    // be told apart, and another org that invited the address must not read this one's sign-ins.
    const orgIds = [members.length === 1 ? members[0]!.org_id : null];
    if (limit) {
      // A refused attempt checks nothing, so it is not a failure of its own.
      await forgetAttempt(db, attempt);
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
    await forgetAttempt(db, attempt);
    const { token, session } = await startSession(db, user, lifetimes, now, input.address);
    return { kind: 'signed_in', token, session };
  } finally {
    turn.leave();
  }
}
