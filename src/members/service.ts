// The members feature: the people who sign in to an org's dashboard. Invitations, listing, removal and
// password resets, for the dashboard's members page and `admin user ...`; every change is audited.
import type { Db } from '../database/connect.js';
import { DomainError, invalidField } from '../errors.js';
import { recordAudit } from '../audit/service.js';
import { issueLink } from './invitations.js';
import { voidLinks } from './link-queries.js';
import { adminsWhoCanSignIn } from './policy.js';
import { deleteUserSessions } from './session-queries.js';
import * as users from './queries.js';

export type { Role, UserRow } from './queries.js';
// The one-time links, so that callers reach the whole feature through its service.
export { acceptLink, findLink, linkPath } from './invitations.js';

/** Who makes a change, for the audit log: `cli` or a user's email, and the client address. */
export interface Actor {
  actor: string;
  address: string | null;
}

const EMAIL = /^[^\s@<>"]{1,64}@[^\s@<>"]{1,255}$/;

/** The address as stored and compared: trimmed and lowercased. Throws invalid_request (param email). */
export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (!EMAIL.test(normalized)) throw invalidField('email', 'must be an email address');
  return normalized;
}

/**
 * Adds a member to an org without a password and returns them with the token of their one-time invite
 * link (72 hours); the answer is the same whether or not the address belongs to someone in another org
 * (that membership is apart, with its own password). Throws invalid_request (param email) for a bad
 * address or one already in this org.
 */
export async function inviteMember(
  db: Db,
  input: { orgId: string; email: string; role: users.Role },
  by: Actor,
  now = new Date(),
): Promise<{ user: users.UserRow; token: string }> {
  const email = normalizeEmail(input.email);
  return db.transaction().execute(async (trx) => {
    const user = await users.insertUser(trx, { orgId: input.orgId, email, role: input.role });
    if (!user) throw invalidField('email', 'is already a member of this organisation');
    const token = await issueLink(trx, user.id, 'invite', now);
    await recordAudit(trx, {
      orgId: input.orgId,
      ...by,
      action: `member.invited (${input.role})`,
      target: email,
      at: now,
    });
    return { user, token };
  });
}

/** The org's members, oldest first. */
export async function listMembers(db: Db, orgId: string): Promise<users.UserRow[]> {
  return users.listUsers(db, orgId);
}

/**
 * The member with this email, in `orgId` when given, else in the one org the address belongs to; throws
 * not_found (param email), or invalid_request (param org) when the address is in several orgs and none
 * is named.
 */
export async function requireMemberByEmail(db: Db, email: string, orgId?: string): Promise<users.UserRow> {
  const found = await users.findUsersByEmail(db, normalizeEmail(email));
  const members = orgId === undefined ? found : found.filter((member) => member.org_id === orgId);
  if (members.length === 0) {
    throw new DomainError('not_found', `no dashboard user with email ${email}`, { param: 'email' });
  }
  if (members.length > 1) throw invalidField('org', `${email} is a member of several orgs; name one`);
  return members[0]!;
}

/** The org's member with this id; throws not_found. */
export async function requireMemberInOrg(db: Db, orgId: string, id: string): Promise<users.UserRow> {
  const user = await users.findUserInOrg(db, orgId, id);
  if (!user) throw new DomainError('not_found', 'No member with this id exists in your organisation.', { param: 'id' });
  return user;
}

/**
 * The org's member with this id whom the signed-in `actingUserId` may remove or reset: anyone but
 * themselves, so an admin acting from the dashboard always leaves one admin. Throws not_found, or forbidden.
 */
export async function requireOtherMember(
  db: Db,
  orgId: string,
  id: string,
  actingUserId: string,
): Promise<users.UserRow> {
  const member = await requireMemberInOrg(db, orgId, id);
  if (member.id === actingUserId) {
    throw new DomainError('forbidden', 'You cannot remove or reset yourself here; ask another admin.');
  }
  return member;
}

/** Who asks for a change to a member: the operator, or a signed-in admin of the org (by user id). */
export interface MemberChange {
  by: Actor;
  /** The admin making the change from the dashboard; absent for the CLI. */
  actingUserId?: string;
  now?: Date;
}

/**
 * Locks the org's members for a change to `target` and checks it can still be made, as concurrent
 * changes may have moved on since the request began: the target is still a member, and an acting
 * admin still is one, with a password. Returns how many admins who can sign in the change leaves.
 */
async function lockForChange(trx: Db, target: users.UserRow, actingUserId: string | undefined): Promise<number> {
  const members = await users.lockOrgUsers(trx, target.org_id);
  if (!members.some((member) => member.id === target.id)) {
    throw new DomainError('not_found', 'No member with this id exists in your organisation.', { param: 'id' });
  }
  if (actingUserId !== undefined) {
    const acting = members.find((member) => member.id === actingUserId);
    if (!acting || acting.role !== 'admin' || acting.password_hash === null) {
      throw new DomainError('forbidden', 'You are no longer an admin of this organisation.');
    }
  }
  return adminsWhoCanSignIn(members, target.id);
}

/**
 * Removes a member; their sessions and links end with them. Returns how many admins who can sign in
 * the org has left: from the dashboard always at least one, the admin who asked.
 */
export async function removeMember(db: Db, user: users.UserRow, change: MemberChange): Promise<{ adminsLeft: number }> {
  const { by, actingUserId, now = new Date() } = change;
  return db.transaction().execute(async (trx) => {
    const adminsLeft = await lockForChange(trx, user, actingUserId);
    await users.deleteUser(trx, user.id);
    await recordAudit(trx, { orgId: user.org_id, ...by, action: 'member.removed', target: user.email, at: now });
    return { adminsLeft };
  });
}

/**
 * Resets a member's password: clears it (a reset is how a leaked password is taken away), ends their
 * sessions and voids their links. Returns the token of a new one-time link to set another, and how
 * many other admins can still sign in meanwhile.
 */
export async function resetMember(
  db: Db,
  user: users.UserRow,
  change: MemberChange,
): Promise<{ token: string; adminsLeft: number }> {
  const { by, actingUserId, now = new Date() } = change;
  return db.transaction().execute(async (trx) => {
    const adminsLeft = await lockForChange(trx, user, actingUserId);
    await users.clearPasswordHash(trx, user.id);
    await deleteUserSessions(trx, user.id);
    await voidLinks(trx, user.id, now);
    const token = await issueLink(trx, user.id, 'reset', now);
    await recordAudit(trx, { orgId: user.org_id, ...by, action: 'member.reset', target: user.email, at: now });
    return { token, adminsLeft };
  });
}

/**
 * Gives a member another role, at once (a session reads its member's role on every request). Returns
 * whether it changed anything (false: they had that role already) and how many admins who can sign in
 * the org then has: from the dashboard always at least one, the admin who asked.
 */
export async function changeMemberRole(
  db: Db,
  user: users.UserRow,
  role: users.Role,
  change: MemberChange,
): Promise<{ changed: boolean; adminsLeft: number }> {
  const { by, actingUserId, now = new Date() } = change;
  return db.transaction().execute(async (trx) => {
    const othersLeft = await lockForChange(trx, user, actingUserId);
    const current = (await users.findUserById(trx, user.id))!;
    const staysAdmin = role === 'admin' && current.password_hash !== null ? 1 : 0;
    if (current.role === role) return { changed: false, adminsLeft: othersLeft + staysAdmin };
    await users.setRole(trx, user.id, role);
    await recordAudit(trx, {
      orgId: user.org_id,
      ...by,
      action: `member.role_changed (${role})`,
      target: user.email,
      at: now,
    });
    return { changed: true, adminsLeft: othersLeft + staysAdmin };
  });
}
