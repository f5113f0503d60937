// Integrations → API keys: the org's keys of the mode shown (masked), creating one of that mode (shown
// once, with a copy button) and revoking one after a confirmation page. Keys go through the same code as
// `admin key create`.
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
import { confirmationPage, csrfField, notice, onceField, page, tableBox } from '../layout.js';
import { maskedKey, minute } from '../format.js';
import type { DashboardSession } from '../mode.js';
import { outside } from '../outside-text.js';
import { fieldAttributes, fieldError, fieldProblemOf, refusedNotice, type FieldProblem } from '../field-errors.js';

const CURRENT = '/dashboard/keys';

/** The org's keys of the mode shown, newest first. */
async function modeKeys(env: DashboardEnv, session: DashboardSession) {
  return (await listKeys(env.deps.db, session.orgId)).filter((key) => key.mode === session.mode);
}

async function keysPage(
  env: DashboardEnv,
  session: DashboardSession,
  shown: SafeHtml | null,
  refused: { label: string; problem: FieldProblem } | null = null,
): Promise<string> {
  const problem = refused?.problem ?? null;
  const keys = await modeKeys(env, session);
  const test = session.mode === 'test';
  const admin = session.role === 'admin';
  const rows = keys.map(
    (key) =>
      html`<tr>
        <td>${key.label ? outside(key.label) : html`<span class="muted">No label</span>`}</td>
        <td><code>${maskedKey(key.prefix, key.mode)}</code></td>
        <td>
          ${minute(key.created_at)}${key.created_by ? html`<br /><span class="muted">by ${outside(key.created_by)}</span>` : ''}
        </td>
        <td class="when">${key.last_used_at ? minute(key.last_used_at) : 'Never'}</td>
        <td>
          ${key.revoked_at ? html`<span class="state-bad">Revoked ${minute(key.revoked_at)}</span>` : html`<span class="state-good">Active</span>`}
        </td>
        ${admin ? html`<td>${key.revoked_at ? '' : html`<a class="button danger" href="/dashboard/keys/${key.prefix}/revoke" aria-label="Revoke ${maskedKey(key.prefix, key.mode)}">Revoke</a>`}</td>` : ''}
      </tr>`,
  );
  const table = keys.length
    ? tableBox(
        'API keys',
        html`<table>
          <caption class="muted">
            ${test ? 'Test keys' : 'Live keys'} of ${outside(session.orgName)}, newest first
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
        </table>`,
      )
    : html`<p>No ${test ? 'test' : 'live'} API keys yet.</p>`;
  const about = test
    ? html`<p>
        Test keys (<code>svc_test_…</code>) see only test data: their calls reach the simulator alone and spend test
        credits. Switch test mode off to see live keys.
      </p>`
    : '';
  const form = admin
    ? html`<h2>Create a ${test ? 'test' : 'live'} key</h2>
        <form method="post" action="/dashboard/keys">
          ${csrfField(session)}${onceField()}
          <label for="label">Label (optional)</label>
          <input
            type="text"
            id="label"
            name="label"
            maxlength="${MAX_KEY_LABEL_LENGTH}"
            value="${refused?.label ?? ''}"
            ${fieldAttributes('label', problem, 'label-help')}
          />
          <p id="label-help" class="muted">What the key is for, such as "Production server".</p>
          ${fieldError('label', problem)}
          <button type="submit">Create API key</button>
        </form>`
    : '';
  return page({ title: 'API keys', session, current: CURRENT, body: [shown, about, table, form] });
}

/** The key with this prefix among the mode's keys; not_found for another mode's, as for another org's. */
async function orgKey(env: DashboardEnv, session: DashboardSession, prefix: string) {
  const key = (await modeKeys(env, session)).find((entry) => entry.prefix === prefix);
  if (!key) throw notFound('API key');
  return key;
}

/** The 409 for a key revoked before: nothing more to do. */
function alreadyRevoked(at: Date): DomainError {
  return new DomainError('invalid_state', `This key was already revoked, ${minute(at)}; nothing more to do.`);
}

function by(ctx: Koa.Context, session: DashboardSession) {
  return { actor: session.email, address: ctx.ip };
}

/** POST: creates an API key of the mode shown and shows it once. */
async function createKey(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const label = field(ctx, 'label');
  let key: string;
  try {
    ({ key } = await createApiKey(env.deps.db, session.orgId, { label, mode: session.mode }, by(ctx, session)));
  } catch (error) {
    const problem = fieldProblemOf(error, ['label']);
    if (!problem) throw error;
    sendPage(ctx, 400, await keysPage(env, session, refusedNotice('No key was created', problem), { label, problem }));
    return;
  }
  const shown = notice(
    'secret',
    html`<p><strong>Your new API key.</strong> Copy it now: it is shown this once and cannot be shown again.</p>
      <p><code id="new-key">${key}</code></p>
      <button type="button" class="secondary" data-copy="new-key" hidden>Copy key</button>`,
  );
  sendPage(ctx, 201, await keysPage(env, session, shown));
}

/** GET: the page asking to confirm a key's revocation. */
async function confirmRevoke(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const key = await orgKey(env, session, pathParam(ctx, 'prefix')!);
  if (key.revoked_at) throw alreadyRevoked(key.revoked_at);
  const question = html`Revoke
    <code>${maskedKey(key.prefix, key.mode)}</code>${key.label ? html` (${outside(key.label)})` : ''}? Requests with it
    are refused within 30 seconds. This cannot be undone.`;
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

/** POST: revokes the key (one of the mode shown). */
async function revoke(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const key = await orgKey(env, session, pathParam(ctx, 'prefix')!);
  if (!(await revokeKey(env.deps.db, key.prefix, by(ctx, session), { liveOrgId: session.orgId }))) {
    const revoked = await orgKey(env, session, key.prefix);
    throw alreadyRevoked(revoked.revoked_at ?? new Date());
  }
  redirectAfterPost(ctx, CURRENT);
}

/** GET: the org's API keys of the mode shown. */
async function showKeys(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  sendPage(ctx, 200, await keysPage(env, session, null));
}

/** Registers the API keys pages. */
export function keyRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showKeys));
  router.post(CURRENT, formBody, action(env, createKey, { once: true }));
  router.get('/dashboard/keys/:prefix/revoke', view(env, confirmRevoke, { adminOnly: true }));
  router.post('/dashboard/keys/:prefix/revoke', formBody, action(env, revoke));
}
