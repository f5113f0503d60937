// One-time invite and reset links: issued to a member without a password (or whose password was reset),
// stored by their token's hash, good once for 72 hours, and used to set the member's password.
import type { Db } from '../database/connect.js';
import { DomainError } from '../errors.js';
import { recordAudit } from '../audit/service.js';
import { hashPassword } from './passwords.js';
import { checkPassword } from './password-strength.js';
import { hashToken, newToken } from './tokens.js';
import { LINK_LIFETIME_MS } from './policy.js';
import * as links from './link-queries.js';
import { deleteUserSessions } from './session-queries.js';
import * as users from './queries.js';

const LINK_GONE = 'This link is unknown, used or expired; ask an admin for a new one.';

/** The path of a one-time link, under the dashboard. */
export function linkPath(token: string): string {
  return `/dashboard/invite/${token}`;
}

/** Stores a new link of `purpose` for the user and returns its token (the link's secret). */
export async function issueLink(db: Db, userId: string, purpose: 'invite' | 'reset', now: Date): Promise<string> {
  const token = newToken();
  await links.insertLink(db, {
    tokenHash: hashToken(token),
    userId,
    purpose,
    expiresAt: new Date(now.getTime() + LINK_LIFETIME_MS),
  });
  return token;
}

/** The usable link with this token (its user's email), or undefined for an unknown, used or expired one. */
export async function findLink(db: Db, token: string, now = new Date()) {
  return links.findUsableLink(db, hashToken(token), now);
}

/**
 * Sets the password of the link's user and uses the link up, ending the user's other sessions; the
 * audit entry names `address`, where the link was opened. Throws invalid_request (param password) for a
 * weak password, not_found for an unknown, used or expired link.
 */
export async function acceptLink(
  db: Db,
  token: string,
  password: string,
  now = new Date(),
  address: string | null = null,
): Promise<users.UserRow> {
  const tokenHash = hashToken(token);
  // Read first for the email the strength check weighs; the transaction checks the link again.
  const opened = await links.findUsableLink(db, tokenHash, now);
  if (!opened) throw new DomainError('not_found', LINK_GONE);
  checkPassword(password, [opened.email, ...opened.email.split(/[@.+_-]/)]);
  const passwordHash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    const link = await links.findUsableLink(trx, tokenHash, now);
    if (!link || !(await links.useLink(trx, tokenHash, now))) {
      throw new DomainError('not_found', LINK_GONE);
    }
    await users.setPasswordHash(trx, link.user_id, passwordHash);
    await deleteUserSessions(trx, link.user_id);
    const user = (await users.findUserById(trx, link.user_id))!;
    await recordAudit(trx, {
      orgId: user.org_id,
      actor: user.email,
      address,
      action: 'member.password_set',
      at: now,
    });
    return user;
  });
}
