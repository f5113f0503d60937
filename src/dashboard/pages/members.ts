// Members: who can sign in to the org's dashboard. Admins invite (the one-time link is shown to copy:
// there is no mail server), make another member an admin or a viewer, reset a password (a new link, the
// person's sessions end) and remove members.
import type Router from '@koa/router';
import type Koa from 'koa';
import { outside } from '../outside-text.js';
import {
  changeMemberRole,
  inviteMember,
  linkPath,
  listMembers,
  removeMember,
  requireOtherMember,
  resetMember,
  type Role,
  type UserRow,
} from '../../members/service.js';
import {
  action,
  field,
  formBody,
  redirectAfterPost,
  sendPage,
  uuidParam,
  view,
  pathParam,
  type DashboardEnv,
  type PageHandler,
} from '../route-steps.js';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { type Confirmation, confirmationPage, csrfField, notice, page, tableBox } from '../layout.js';
import { fieldAttributes, fieldError, fieldProblemOf, refusedNotice, type FieldProblem } from '../field-errors.js';
import { minute } from '../format.js';
import type { DashboardSession } from '../mode.js';
import { requestOrigin } from '../security.js';

const CURRENT = '/dashboard/members';
const ROLES: Role[] = ['admin', 'viewer'];

/** The address a one-time link starts with: PUBLIC_BASE_URL when set, else the one this request came to. */
function linkBase(env: DashboardEnv, ctx: Koa.Context): string {
  const { config } = env.deps;
  return config.publicBaseUrlSet ? config.publicBaseUrl : requestOrigin(ctx);
}

function linkNotice(base: string, email: string, token: string): SafeHtml {
  return notice(
    'secret',
    html`<p>
        <strong>One-time link for ${outside(email)}.</strong> Pass it on privately: it works once, for 72 hours, and is
        not shown again.
      </p>
      <p><code id="member-link">${base}${linkPath(token)}</code></p>
      <button type="button" class="secondary" data-copy="member-link" hidden>Copy link</button>`,
  );
}

/** The step giving a member the other role: viewers become admins, admins viewers. */
function roleStepOf(member: UserRow): RoleStep {
  return member.role === 'admin' ? 'make-viewer' : 'make-admin';
}

/** The link to the page confirming that a member gets the other role. */
function roleLink(member: UserRow): SafeHtml {
  const step = roleStepOf(member);
  const role = ROLE_OF[step];
  return html`<a
    class="button secondary"
    href="${CURRENT}/${member.id}/${step}"
    aria-label="Make ${role}, ${member.email}"
    >Make ${role}</a
  >`;
}

async function membersPage(
  env: DashboardEnv,
  session: DashboardSession,
  shown: HtmlValue,
  typed: { email: string; role?: Role; problem?: FieldProblem } = { email: '' },
): Promise<string> {
  const problem = typed.problem ?? null;
  const members = await listMembers(env.deps.db, session.orgId);
  const admin = session.role === 'admin';
  const rows = members.map(
    (member) =>
      html`<tr>
        <td>${outside(member.email)}</td>
        <td>${member.role}</td>
        <td>${member.password_hash ? 'Signed up' : 'Invited'}</td>
        <td class="when">${minute(member.created_at)}</td>
        ${
          admin
            ? html`<td>
                ${
                  member.id === session.userId
                    ? html`<span class="muted">You</span>`
                    : html`${roleLink(member)}
                        <a
                          class="button secondary"
                          href="${CURRENT}/${member.id}/reset"
                          aria-label="Reset password of ${member.email}"
                          >Reset password</a
                        >
                        <a
                          class="button danger"
                          href="${CURRENT}/${member.id}/remove"
                          aria-label="Remove ${member.email}"
                          >Remove</a
                        >`
                }
              </td>`
            : ''
        }
      </tr>`,
  );
  const form = admin
    ? html`<h2>Invite a member</h2>
        <form method="post" action="${CURRENT}">
          ${csrfField(session)}
          <label for="email">Email</label>
          <input
            type="email"
            id="email"
            name="email"
            required
            value="${typed.email}"
            ${fieldAttributes('email', problem)}
          />
          ${fieldError('email', problem)}
          <label for="role">Role</label>
          <select id="role" name="role" ${fieldAttributes('role', problem, 'role-help')}>
            ${ROLES.map(
              (role) => html`<option value="${role}" ${role === typed.role ? html` selected` : ''}>${role}</option>`,
            )}
          </select>
          <p id="role-help" class="muted">Admins change everything here; viewers only read.</p>
          ${fieldError('role', problem)}
          <button type="submit">Invite member</button>
        </form>`
    : '';
  const table = tableBox(
    'Members',
    html`<table>
      <thead>
        <tr>
          <th scope="col">Email</th>
          <th scope="col">Role</th>
          <th scope="col">State</th>
          <th scope="col">Added</th>
          ${admin ? html`<th scope="col"><span class="muted">Actions</span></th>` : ''}
        </tr>
      </thead>
      <tbody>
        ${rows}
      </tbody>
    </table>`,
  );
  return page({ title: 'Members', session, current: CURRENT, body: [shown, table, form] });
}

function by(ctx: Koa.Context, session: DashboardSession) {
  return { actor: session.email, address: ctx.ip };
}

async function otherMember(env: DashboardEnv, ctx: Koa.Context, session: DashboardSession) {
  return requireOtherMember(env.deps.db, session.orgId, uuidParam(pathParam(ctx, 'id'), 'member'), session.userId);
}

/** GET: the org's members, and the invite form for admins. */
async function showMembers(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  sendPage(ctx, 200, await membersPage(env, session, null));
}

const NOT_INVITED = 'Nobody was invited';

/** POST: invites a member and shows their one-time link; a refused invitation shows the form again. */
async function invite(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const email = field(ctx, 'email');
  const role = ROLES.find((entry) => entry === field(ctx, 'role'));
  if (!role) {
    const problem = { field: 'role', message: `Choose a role: ${ROLES.join(' or ')}.` };
    sendPage(ctx, 400, await membersPage(env, session, refusedNotice(NOT_INVITED, problem), { email, problem }));
    return;
  }
  try {
    const { user, token } = await inviteMember(env.deps.db, { orgId: session.orgId, email, role }, by(ctx, session));
    sendPage(ctx, 201, await membersPage(env, session, linkNotice(linkBase(env, ctx), user.email, token)));
  } catch (error) {
    const problem = fieldProblemOf(error, ['email']);
    if (!problem) throw error;
    const shown = refusedNotice(NOT_INVITED, problem);
    sendPage(ctx, 400, await membersPage(env, session, shown, { email, role, problem }));
  }
}

/** The steps that give a member a role, and the role each gives. */
type RoleStep = 'make-admin' | 'make-viewer';
const ROLE_OF: Record<RoleStep, Role> = { 'make-admin': 'admin', 'make-viewer': 'viewer' };

/** What the confirmation page of each step on another member asks. */
const CONFIRMATIONS: Record<
  'reset' | 'remove' | RoleStep,
  (member: UserRow, session: DashboardSession) => Pick<Confirmation, 'title' | 'question' | 'button' | 'once'>
> = {
  'make-admin': (member) => ({
    title: 'Make admin',
    question: html`Make <strong>${outside(member.email)}</strong> an admin? From their next page on they can change
      everything here: keys, webhooks, campaigns, the do-not-call list and the members, you included.`,
    button: 'Make admin',
  }),
  'make-viewer': (member) => ({
    title: 'Make viewer',
    question: html`Make <strong>${outside(member.email)}</strong> a viewer? From their next page on they can only read;
      a form they have open is refused.`,
    button: 'Make viewer',
  }),
  reset: (member) => ({
    title: 'Reset password',
    question: html`Reset the password of <strong>${outside(member.email)}</strong>? Their password stops working and
      they are signed out at once; you get a one-time link for them to choose a new one.`,
    button: 'Reset password',
    once: true,
  }),
  remove: (member, session) => ({
    title: 'Remove member',
    question: html`Remove <strong>${outside(member.email)}</strong> from ${outside(session.orgName)}? They are signed
      out at once and their links stop working.`,
    button: 'Remove member',
  }),
};

/** GET handlers of the page asking an admin to confirm `step` on another member. */
function confirmStep(step: keyof typeof CONFIRMATIONS): PageHandler {
  return async (ctx, session, env) => {
    const member = await otherMember(env, ctx, session);
    const confirmation = confirmationPage({
      ...CONFIRMATIONS[step](member, session),
      session,
      current: CURRENT,
      action: `${CURRENT}/${member.id}/${step}`,
      cancel: CURRENT,
    });
    sendPage(ctx, 200, confirmation);
  };
}

/** POST: resets another member's password and shows their new one-time link. */
async function reset(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const member = await otherMember(env, ctx, session);
  const { token } = await resetMember(env.deps.db, member, { by: by(ctx, session), actingUserId: session.userId });
  sendPage(ctx, 200, await membersPage(env, session, linkNotice(linkBase(env, ctx), member.email, token)));
}

/** POST handlers giving another member the role of `step`; the page says what was done. */
function giveRole(step: RoleStep): PageHandler {
  return async (ctx, session, env) => {
    const member = await otherMember(env, ctx, session);
    const role = ROLE_OF[step];
    const change = { by: by(ctx, session), actingUserId: session.userId };
    const { changed } = await changeMemberRole(env.deps.db, member, role, change);
    const shown = notice(
      'info',
      html`${outside(member.email)} ${changed ? 'is now' : 'was already'} ${role === 'admin' ? 'an admin' : 'a viewer'}.`,
    );
    sendPage(ctx, 200, await membersPage(env, session, shown));
  };
}

/** POST: removes another member. */
async function remove(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const member = await otherMember(env, ctx, session);
  await removeMember(env.deps.db, member, { by: by(ctx, session), actingUserId: session.userId });
  redirectAfterPost(ctx, CURRENT);
}

/** Registers the members pages. */
export function memberRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showMembers));
  router.post(CURRENT, formBody, action(env, invite));
  router.get(`${CURRENT}/:id/reset`, view(env, confirmStep('reset'), { adminOnly: true }));
  router.post(`${CURRENT}/:id/reset`, formBody, action(env, reset, { once: true }));
  router.get(`${CURRENT}/:id/remove`, view(env, confirmStep('remove'), { adminOnly: true }));
  router.post(`${CURRENT}/:id/remove`, formBody, action(env, remove));
  for (const step of ['make-admin', 'make-viewer'] as const) {
    router.get(`${CURRENT}/:id/${step}`, view(env, confirmStep(step), { adminOnly: true }));
    router.post(`${CURRENT}/:id/${step}`, formBody, action(env, giveRole(step)));
  }
}
