// Do-not-call list: the numbers of the mode shown that calls may not dial, newest first a page at a time;
// admins add a number (or change its reason) and remove one after a confirmation page, through the same
// service as the API, each change audited in its transaction. Viewers only read.
import type Router from '@koa/router';
import type Koa from 'koa';
import {
  addSuppression,
  browseSuppressions,
  checkSuppressionCreate,
  findSuppression,
  removeSuppression,
} from '../../suppressions/service.js';
import type { Suppression } from '../../suppressions/mapper.js';
import { action, field, formBody, redirectAfterPost, sendPage, view, type DashboardEnv } from '../route-steps.js';
import { html, type HtmlValue } from '../html.js';
import { outside } from '../outside-text.js';
import { confirmationPage, csrfField, notice, onceField, page, tableBox } from '../layout.js';
import { minute } from '../format.js';
import { doneLocation, doneOf } from '../done-notices.js';
import { fieldAttributes, fieldError, fieldProblemOf, refusedNotice, type FieldProblem } from '../field-errors.js';
import { livemodeOf, type DashboardSession } from '../mode.js';
import { pageOf, pager } from './paging.js';

const CURRENT = '/dashboard/suppressions';
const REMOVE = `${CURRENT}/remove`;
const REASONS = [
  'opted_out',
  'do_not_call_registry',
  'complaint',
  'wrong_number',
  'other',
] as const satisfies ReadonlyArray<Suppression['reason']>;
/** The longest note, as the spec's SuppressionCreate has it. */
const MAX_NOTE_LENGTH = 500;

/** What the add form holds: empty at first, as sent when it comes back refused. */
interface AddValues {
  phone: string;
  reason: string;
  note: string;
}

const EMPTY: AddValues = { phone: '', reason: REASONS[0], note: '' };

function addForm(session: DashboardSession, values: AddValues, problem: FieldProblem | null): HtmlValue {
  return html`<h2>Add a number</h2>
    <form method="post" action="${CURRENT}">
      ${csrfField(session)}${onceField()}
      <label for="phone_e164">Phone number (E.164)</label>
      <input
        type="tel"
        id="phone_e164"
        name="phone_e164"
        required
        maxlength="16"
        placeholder="+919812345678"
        value="${values.phone}"
        ${fieldAttributes('phone_e164', problem, 'phone-help')}
      />
      <p id="phone-help" class="muted">
        A + and 7 to 15 digits. A number already listed gets the new reason and note (an empty note removes its old
        one).
      </p>
      ${fieldError('phone_e164', problem)}
      <label for="reason">Reason</label>
      <select id="reason" name="reason" ${fieldAttributes('reason', problem)}>
        ${REASONS.map(
          (reason) =>
            html`<option value="${reason}" ${reason === values.reason ? html` selected` : ''}>${reason}</option>`,
        )}
      </select>
      ${fieldError('reason', problem)}
      <label for="note">Note (optional)</label>
      <textarea id="note" name="note" maxlength="${MAX_NOTE_LENGTH}" ${fieldAttributes('note', problem)}>
${values.note}</textarea>
      ${fieldError('note', problem)}
      <button type="submit">Add to the list</button>
    </form>`;
}

async function listPage(
  env: DashboardEnv,
  ctx: Koa.Context,
  session: DashboardSession,
  shown: HtmlValue,
  form: { values: AddValues; problem: FieldProblem | null } = { values: EMPTY, problem: null },
): Promise<string> {
  const { page: number, limit, offset } = pageOf(ctx);
  const { items, more } = await browseSuppressions(env.deps.db, session.modeOrgId, { limit, offset });
  const admin = session.role === 'admin';
  const rows = items.map(
    (entry) =>
      html`<tr>
        <td>${outside(entry.phone_e164)}</td>
        <td>${entry.reason}</td>
        <td>${entry.note ? outside(entry.note) : '—'}</td>
        <td>${entry.created_by}</td>
        <td class="when">${minute(entry.created_at)}</td>
        ${
          admin
            ? html`<td>
                <a
                  class="button danger"
                  href="${REMOVE}?phone_e164=${encodeURIComponent(entry.phone_e164)}"
                  aria-label="Remove ${entry.phone_e164}"
                  >Remove</a
                >
              </td>`
            : ''
        }
      </tr>`,
  );
  const table = items.length
    ? tableBox(
        'Do-not-call list',
        html`<table>
          <caption class="muted">
            Numbers calls may not dial, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Phone</th>
              <th scope="col">Reason</th>
              <th scope="col">Note</th>
              <th scope="col">Added from</th>
              <th scope="col">Added</th>
              ${admin ? html`<th scope="col"><span class="muted">Actions</span></th>` : ''}
            </tr>
          </thead>
          <tbody>
            ${rows}
          </tbody>
        </table>`,
      )
    : html`<p>No numbers on the ${session.mode === 'test' ? 'test' : 'live'} do-not-call list.</p>`;
  const about = html`<p>
    Calls to these numbers are refused (<code>403 forbidden</code>).
    ${
      session.mode === 'test'
        ? 'This is the test list: it stops test calls only and leaves the live list as it is.'
        : 'Test mode keeps a list of its own.'
    }
  </p>`;
  const body = [shown, about, table, pager(CURRENT, {}, number, { more, shown: items.length })];
  return page({
    title: 'Do-not-call list',
    session,
    current: CURRENT,
    body: admin ? [...body, addForm(session, form.values, form.problem)] : body,
  });
}

function audit(ctx: Koa.Context, session: DashboardSession, action: string, phone: string) {
  return {
    orgId: session.orgId,
    livemode: livemodeOf(session),
    actor: session.email,
    address: ctx.ip,
    action,
    target: phone,
  };
}

/** GET: the list of the mode shown, the form to add a number for admins, and what a removal just did. */
async function showList(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const shown = doneOf(ctx, session) === 'removed' ? notice('info', 'The number was removed from the list.') : null;
  sendPage(ctx, 200, await listPage(env, ctx, session, shown));
}

/**
 * POST: adds a number (or changes its reason and note), checked as the API checks its body; a refused
 * form comes back as it was sent, with the error under its field.
 */
async function add(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const values: AddValues = {
    phone: field(ctx, 'phone_e164').trim(),
    reason: field(ctx, 'reason'),
    note: field(ctx, 'note'),
  };
  let input;
  try {
    input = checkSuppressionCreate({
      phone_e164: values.phone,
      reason: values.reason,
      ...(values.note ? { note: values.note } : {}),
    });
  } catch (error) {
    const problem = fieldProblemOf(error, ['phone_e164', 'reason', 'note']);
    if (!problem) throw error;
    const shown = refusedNotice('The number was not added', problem);
    sendPage(ctx, 400, await listPage(env, ctx, session, shown, { values, problem }));
    return;
  }
  const { created } = await addSuppression(env.deps.db, session.modeOrgId, input, 'dashboard', (isNew) =>
    audit(ctx, session, isNew ? 'suppression.added' : 'suppression.updated', input.phone_e164),
  );
  const shown = notice(
    'info',
    html`${outside(input.phone_e164)}
    ${created ? 'was added to the list' : 'was already listed; its reason and note were replaced'}.`,
  );
  sendPage(ctx, created ? 201 : 200, await listPage(env, ctx, session, shown));
}

/** The number a removal names, in its query. */
function phoneOf(ctx: Koa.Context): string {
  return typeof ctx.query.phone_e164 === 'string' ? ctx.query.phone_e164 : '';
}

/** GET: the page asking to confirm a number's removal (not_found when it is not listed). */
async function confirmRemove(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const phone = phoneOf(ctx);
  await findSuppression(env.deps.db, session.modeOrgId, phone);
  const confirmation = confirmationPage({
    title: 'Remove from the do-not-call list',
    session,
    current: CURRENT,
    question: html`Remove ${outside(phone)} from the do-not-call list? Calls to it are allowed again at once.`,
    action: `${REMOVE}?phone_e164=${encodeURIComponent(phone)}`,
    button: 'Remove number',
    cancel: CURRENT,
  });
  sendPage(ctx, 200, confirmation);
}

/** POST: removes the number from the list of the mode shown; not_found when it is not listed. */
async function remove(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const phone = phoneOf(ctx);
  await removeSuppression(env.deps.db, session.modeOrgId, phone, audit(ctx, session, 'suppression.removed', phone));
  redirectAfterPost(ctx, doneLocation(CURRENT, session, 'removed'));
}

/** Registers the do-not-call list's pages. */
export function suppressionRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showList));
  // One-time, so reloading the answer page does not add (and audit) the number again.
  router.post(CURRENT, formBody, action(env, add, { once: true }));
  router.get(REMOVE, view(env, confirmRemove, { adminOnly: true }));
  router.post(REMOVE, formBody, action(env, remove));
}
