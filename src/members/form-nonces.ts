// One-time forms (those showing a secret once): each carries a fresh nonce, and a session may use a
// nonce once, so a reload or a second click does not repeat the change.
import type { Db } from '../database/connect.js';
import * as formUses from './form-use-queries.js';
import { newToken } from './tokens.js';

/** What a nonce looks like (newFormNonce makes 43 characters). */
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;

/** A fresh nonce for a one-time form. */
export function newFormNonce(): string {
  return newToken();
}

/** Whether a form's value is shaped like a nonce. */
export function isFormNonce(value: string): boolean {
  return NONCE.test(value);
}

/**
 * Records the nonce as used in the session: `claimed`, or `used` when it already was, or `no_session`
 * when the session ended meanwhile.
 */
export async function claimFormNonce(
  db: Db,
  sessionIdHash: string,
  nonce: string,
  now: Date,
): Promise<'claimed' | 'used' | 'no_session'> {
  return formUses.claimFormUse(db, sessionIdHash, nonce, now);
}

/** Forgets a nonce's use, so the form it came with may be sent again (its change was not made). */
export async function releaseFormNonce(db: Db, sessionIdHash: string, nonce: string): Promise<void> {
  await formUses.releaseFormUse(db, sessionIdHash, nonce);
}
