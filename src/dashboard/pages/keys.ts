// Integrations → API keys: the org's keys (masked), creating one (shown once, with a copy button) and
// revoking one after a confirmation page. Keys go through the same code as `admin key create`.
import type Router from '@koa/router';
import type Koa from 'koa';
import { createApiKey, listKeys, MAX_KEY_LABEL_LENGTH, revokeKey } from '../../orgs/api-keys.js';
import { DomainError, notFound } from '../../errors.js';
import {
  action,
  field,
  formBody,
  redirectAfterPost,
  sendPage,
  view,
  pathParam,
  type DashboardEnv,
} from '../route-steps.js';
import { html, type SafeHtml } from '../html.js';
import { confirmationPage, csrfField, notice, onceField, page } from '../layout.js';
import { maskedKey, minute } from '../format.js';
import type { Session } from '../../members/sessions.js';
import { outside } from '../outside-text.js';

const CURRENT = '/dashboard/keys';

async function keysPage(env: DashboardEnv, session: Session, shown: SafeHtml | null): Promise<string> {
  const keys = await listKeys(env.deps.db, session.orgId);
  const admin = session.role === 'admin';
  const rows = keys.map(
    (key) =>
      html`<tr>
        <td>${key.label ? outside(key.label) : html`<span class="muted">No label</span>`}</td>
        <td><code>${maskedKey(key.prefix)}</code></td>
        <td>
          ${minute(key.created_at)}${key.created_by ? html`<br /><span class="muted">by ${outside(key.created_by)}</span>` : ''}
        </td>
        <td class="when">${key.last_used_at ? minute(key.last_used_at) : 'Never'}</td>
        <td>
          ${key.revoked_at ? html`<span class="state-bad">Revoked ${minute(key.revoked_at)}</span>` : html`<span class="state-good">Active</span>`}
        </td>
        ${admin ? html`<td>${key.revoked_at ? '' : html`<a class="button danger" href="/dashboard/keys/${key.prefix}/revoke" aria-label="Revoke ${maskedKey(key.prefix)}">Revoke</a>`}</td>` : ''}
      </tr>`,
  );
  const table = keys.length
    ? html`<table>
        <caption class="muted">
          Keys of ${outside(session.orgName)}, newest first
        </caption>
        <thead>
          <tr>
            <th scope="col">Label</th>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
            ${admin ? html`<th scope="col"><span class="muted">Actions</span></th>` : ''}
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>`
    : html`<p>No API keys yet.</p>`;
  const form = admin
    ? html`<h2>Create a key</h2>
        <form method="post" action="/dashboard/keys">
          ${csrfField(session)}${onceField()}
          <label for="label">Label (optional)</label>
          <input
            type="text"
            id="label"
            name="label"
            maxlength="${MAX_KEY_LABEL_LENGTH}"
            aria-describedby="label-help"
          />
          <p id="label-help" class="muted">What the key is for, such as "Production server".</p>
          <button type="submit">Create API key</button>
        </form>`
    : '';
  return page({ title: 'API keys', session, current: CURRENT, body: [shown, table, form] });
}

async function orgKey(env: DashboardEnv, session: Session, prefix: string) {
  const key = (await listKeys(env.deps.db, session.orgId)).find((entry) => entry.prefix === prefix);
  if (!key) throw notFound('API key');
  return key;
}

/** The 409 for a key revoked before: nothing more to do. */
function alreadyRevoked(at: Date): DomainError {
  return new DomainError('invalid_state', `This key was already revoked, ${minute(at)}; nothing more to do.`);
}

function by(ctx: Koa.Context, session: Session) {
  return { actor: session.email, address: ctx.ip };
}

/** POST: creates an API key and shows it once. */
async function createKey(ctx: Koa.Context, session: Session, env: DashboardEnv): Promise<void> {
  const { key } = await createApiKey(
    env.deps.db,
    session.orgId,
    { label: field(ctx, 'label'), mode: 'live' },
    by(ctx, session),
  );
  const shown = notice(
    'secret',
    html`<p><strong>Your new API key.</strong> Copy it now: it is shown this once and cannot be shown again.</p>
      <p><code id="new-key">${key}</code></p>
      <button type="button" class="secondary" data-copy="new-key" hidden>Copy key</button>`,
  );
  sendPage(ctx, 201, await keysPage(env, session, shown));
}

/** GET: the page asking to confirm a key's revocation. */
async function confirmRevoke(ctx: Koa.Context, session: Session, env: DashboardEnv): Promise<void> {
  const key = await orgKey(env, session, pathParam(ctx, 'prefix')!);
  if (key.revoked_at) throw alreadyRevoked(key.revoked_at);
  const question = html`Revoke <code>${maskedKey(key.prefix)}</code>${key.label ? html` (${outside(key.label)})` : ''}?
    Requests with it are refused within 30 seconds. This cannot be undone.`;
  const confirmation = confirmationPage({
    title: 'Revoke API key',
    session,
    current: CURRENT,
    question,
    action: `/dashboard/keys/${key.prefix}/revoke`,
    button: 'Revoke key',
    cancel: CURRENT,
  });
  sendPage(ctx, 200, confirmation);
}

/** POST: revokes the key. */
async function revoke(ctx: Koa.Context, session: Session, env: DashboardEnv): Promise<void> {
  if (!(await revokeKey(env.deps.db, pathParam(ctx, 'prefix')!, by(ctx, session), session.orgId))) {
    const key = await orgKey(env, session, pathParam(ctx, 'prefix')!);
    throw alreadyRevoked(key.revoked_at ?? new Date());
  }
  redirectAfterPost(ctx, CURRENT);
}

/** GET: the org's API keys. */
async function showKeys(ctx: Koa.Context, session: Session, env: DashboardEnv): Promise<void> {
  sendPage(ctx, 200, await keysPage(env, session, null));
}

/** Registers the API keys pages. */
export function keyRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showKeys));
  router.post(CURRENT, formBody, action(env, createKey, { once: true }));
  router.get('/dashboard/keys/:prefix/revoke', view(env, confirmRevoke, { adminOnly: true }));
  router.post('/dashboard/keys/:prefix/revoke', formBody, action(env, revoke));
}
