// Failed sign-ins, counted in the database (so the limits hold across processes) per account from one
// address, per address, and per account from everywhere only as a far higher last resort, so failures
// from elsewhere cannot lock a person out.
import type { Db } from '../database/connect.js';
import { recordAudit } from '../audit/service.js';
import {
  SIGN_IN_FAILURE_WINDOW_MS,
  SIGN_IN_FAILURES_PER_ACCOUNT,
  SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS,
  SIGN_IN_FAILURES_PER_ADDRESS,
} from './policy.js';
import * as failures from './sign-in-failure-queries.js';

/** The counters one attempt is held against: the account from this address, the address, the account. */
interface Subjects {
  accountAddress: string;
  address: string;
  account: string;
}

/** A sign-in attempt under way, counted as a failure until its password is found right. */
export interface Attempt {
  subjects: Subjects;
  /** The failure rows written for it. */
  ids: string[];
}

/** Which limit an attempt is over, the narrowest first, or null. */
export type Limit = 'account_address' | 'address' | 'account' | null;

/**
 * Counts an attempt by `email` from `address` as a failure before its password is checked (forgotten
 * if it turns out not to be one), so attempts sent together all count against each other instead of
 * each seeing the same earlier count.
 */
export async function countAttempt(db: Db, email: string, address: string, now: Date): Promise<Attempt> {
  const subjects = {
    accountAddress: `account-address:${email} ${address}`,
    address: `address:${address}`,
    account: `account:${email}`,
  };
  return { subjects, ids: await failures.insertFailures(db, Object.values(subjects), now) };
}

/** Forgets a counted attempt: it was no failure (the password was right, or it was refused unchecked). */
export async function forgetAttempt(db: Db, attempt: Attempt): Promise<void> {
  await failures.deleteFailures(db, attempt.ids);
}

/** Which limit the attempt is over, counting the attempt itself. */
export async function overLimit(db: Db, attempt: Attempt, now: Date): Promise<Limit> {
  const { subjects } = attempt;
  const since = new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS);
  const [accountAddress, client, account] = await Promise.all([
    failures.countFailures(db, subjects.accountAddress, since, SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS + 1),
    failures.countFailures(db, subjects.address, since, SIGN_IN_FAILURES_PER_ADDRESS + 1),
    failures.countFailures(db, subjects.account, since, SIGN_IN_FAILURES_PER_ACCOUNT + 1),
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
export async function auditAccountCeiling(
  db: Db,
  email: string,
  orgIds: (string | null)[],
  address: string,
  now: Date,
): Promise<void> {
  const subject = `account-ceiling:${email}`;
  const [mark] = await failures.insertFailures(db, [subject], now);
  const first = await failures.firstFailureId(db, subject, new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS));
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

/** Removes the failures past the window; returns how many went. */
export async function pruneFailures(db: Db, now: Date): Promise<bigint> {
  return failures.deleteOldFailures(db, new Date(now.getTime() - SIGN_IN_FAILURE_WINDOW_MS));
}
