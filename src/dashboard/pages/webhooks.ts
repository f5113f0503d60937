// Integrations → Webhooks: the org's endpoints of the mode shown with their health, adding one (secret
// shown once), and an endpoint's page with its delivery log (filters, redelivery, retry now) and its
// controls: test send, secret rotation, switching off and on, deletion after a confirmation page. All
// through src/webhooks/service.
import type Router from '@koa/router';
import type Koa from 'koa';
import { EVENT_KINDS } from '../../../generated/events.js';
import { DomainError } from '../../errors.js';
import * as webhooks from '../../webhooks/service.js';
import { MAX_ENDPOINTS_PER_ORG } from '../../webhooks/policy.js';
import {
  action,
  field,
  fields,
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
import { confirmationPage, csrfField, notice, onceField, page, tableBox } from '../layout.js';
import { doneLocation, doneOf } from '../done-notices.js';
import { minute, second } from '../format.js';
import { outside, outsideBlock } from '../outside-text.js';
import { DELIVERY_LOG_SIZE } from '../policy.js';
import {
  fieldAttributes,
  fieldError,
  fieldProblemOf,
  groupAttributes,
  refusedNotice,
  type FieldProblem,
} from '../field-errors.js';
import { livemodeOf, type DashboardSession } from '../mode.js';
import { chosen } from './paging.js';

const CURRENT = '/dashboard/webhooks';
const DAY_MS = 86_400_000;
const SUBSCRIBABLE = EVENT_KINDS.filter((kind) => kind !== 'webhook.test');
const OUTCOMES = ['succeeded', 'failed'] as const;

function state(active: boolean): SafeHtml {
  return active ? html`<span class="state-good">Active</span>` : html`<span class="state-bad">Disabled</span>`;
}

function newEndpointForm(
  session: DashboardSession,
  url: string,
  events: string[],
  problem: FieldProblem | null,
): SafeHtml {
  const boxes = SUBSCRIBABLE.map(
    (kind) =>
      html`<label
        ><input type="checkbox" name="events" value="${kind}" ${events.includes(kind) ? html` checked` : ''} />
        ${kind}</label
      >`,
  );
  return html`<h2>Add an endpoint</h2>
    <form method="post" action="${CURRENT}">
      ${csrfField(session)}${onceField()}
      <label for="url">URL</label>
      <input
        type="url"
        id="url"
        name="url"
        required
        placeholder="https://example.com/webhooks"
        value="${url}"
        ${fieldAttributes('url', problem)}
      />
      ${fieldError('url', problem)}
      <fieldset id="events" tabindex="-1" ${groupAttributes('events', problem)}>
        <legend>Events</legend>
        ${fieldError('events', problem)}${boxes}
      </fieldset>
      <button type="submit">Add endpoint</button>
    </form>`;
}

async function listPage(
  env: DashboardEnv,
  session: DashboardSession,
  extra: { shown?: HtmlValue; url?: string; events?: string[]; problem?: FieldProblem } = {},
): Promise<string> {
  const { db, clock } = env.deps;
  const { items } = await webhooks.listWebhooks(db, session.modeOrgId, { limit: MAX_ENDPOINTS_PER_ORG, offset: 0 });
  const failures = await webhooks.countRecentFailures(
    db,
    items.map((item) => item.id),
    new Date(clock.now().getTime() - DAY_MS),
  );
  const rows = items.map(
    (item) =>
      html`<tr>
        <td><a href="${CURRENT}/${item.id}" class="mono">${outside(item.url)}</a></td>
        <td>${outside(item.events.join(', '))}</td>
        <td>${state(item.active)}</td>
        <td>
          ${item.last_delivery_at ? html`Last attempt ${minute(item.last_delivery_at)}: ${item.last_delivery_status ?? 'no answer'}` : 'No attempts yet'}<br />
          ${failures.get(item.id) ?? 0} failed in the last 24 hours
        </td>
      </tr>`,
  );
  const table = items.length
    ? tableBox(
        'Endpoints',
        html`<table>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
              <th scope="col">Health</th>
            </tr>
          </thead>
          <tbody>
            ${rows}
          </tbody>
        </table>`,
      )
    : html`<p>No webhook endpoints yet.</p>`;
  const form =
    session.role === 'admin'
      ? newEndpointForm(session, extra.url ?? '', extra.events ?? [], extra.problem ?? null)
      : '';
  return page({ title: 'Webhooks', session, current: CURRENT, body: [extra.shown, table, form] });
}

function secretNotice(secret: string, what: string): SafeHtml {
  return notice(
    'secret',
    html`<p>
        <strong>${what}</strong> Copy it now: it is shown this once. Receivers check each delivery's signature with it.
      </p>
      <p><code id="new-secret">${secret}</code></p>
      <button type="button" class="secondary" data-copy="new-secret" hidden>Copy secret</button>`,
  );
}

function outcomeOf(attempt: webhooks.DeliveryLogEntry): SafeHtml {
  const ok = attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
  return ok ? html`<span class="state-good">Succeeded</span>` : html`<span class="state-bad">Failed</span>`;
}

async function endpointPage(
  env: DashboardEnv,
  ctx: Koa.Context,
  session: DashboardSession,
  id: string,
  shown: HtmlValue = null,
): Promise<string> {
  const { db } = env.deps;
  const endpoint = await webhooks.getWebhook(db, session.modeOrgId, id);
  const outcome = chosen(ctx, 'outcome', OUTCOMES);
  const event = chosen(ctx, 'event', EVENT_KINDS);
  const log = await webhooks.listEndpointLog(db, session.modeOrgId, id, { limit: DELIVERY_LOG_SIZE, outcome, event });
  const admin = session.role === 'admin';
  // A switched-off endpoint takes no redelivery or retry (the service refuses them): no button offers one.
  const redeliverable = admin && endpoint.active;
  // A delivery waiting for its next retry is retried now; any other is sent again as a new delivery.
  const rowAction = (attempt: webhooks.DeliveryLogEntry) =>
    attempt.delivery_status === 'pending'
      ? { path: 'retry', label: 'Retry now', name: `Retry now, delivery ${attempt.delivery_id}` }
      : { path: 'redeliver', label: 'Redeliver', name: `Redeliver, delivery ${attempt.delivery_id}` };
  const base = `${CURRENT}/${id}`;
  const controls = admin
    ? html`<h2>Actions</h2>
        <form class="inline" method="post" action="${base}/test">
          ${csrfField(session)}<button type="submit">Send test event</button>
        </form>
        <form class="inline" method="post" action="${base}/rotate">
          ${csrfField(session)}${onceField()}<label class="inline"
            ><input type="checkbox" name="expire_previous" value="true" /> End the old secrets at once (one
            leaked)</label
          ><button type="submit" class="secondary">Rotate secret</button>
        </form>
        <form class="inline" method="post" action="${base}/${endpoint.active ? 'disable' : 'enable'}">
          ${csrfField(session)}<button type="submit" class="secondary">
            ${endpoint.active ? 'Disable' : 'Enable'}
          </button>
        </form>
        <a class="button danger" href="${base}/delete">Delete</a>`
    : '';
  const select = (name: string, label: string, options: readonly string[], current: string | undefined) =>
    html`<label for="${name}">${label}</label>
      <select id="${name}" name="${name}">
        <option value="">All</option>
        ${options.map(
          (option) => html`<option value="${option}" ${option === current ? html` selected` : ''}>${option}</option>`,
        )}
      </select>`;
  const filters = html`<form method="get" action="${base}">
    ${select('outcome', 'Outcome', OUTCOMES, outcome)} ${select('event', 'Event kind', EVENT_KINDS, event)}
    <div><button type="submit" class="secondary">Filter</button></div>
  </form>`;
  const rows = log.map(
    (attempt) =>
      html`<tr>
        <td class="when">${second(attempt.attempted_at)}</td>
        <td>${outside(attempt.event)}</td>
        <td class="mono">${attempt.delivery_id}</td>
        <td>${attempt.attempt}</td>
        <td>${outcomeOf(attempt)}</td>
        <td>${attempt.status_code ?? (attempt.failure_kind ? outside(attempt.failure_kind) : '—')}</td>
        <td>${attempt.duration_ms} ms</td>
        <td>${outsideBlock((attempt.response_excerpt ?? '').slice(0, 500))}</td>
        ${
          redeliverable
            ? html`<td>
                <form method="post" action="${base}/${rowAction(attempt).path}">
                  ${csrfField(session)}<input type="hidden" name="delivery_id" value="${attempt.delivery_id}" /><button
                    type="submit"
                    class="secondary"
                    aria-label="${rowAction(attempt).name}"
                  >
                    ${rowAction(attempt).label}
                  </button>
                </form>
              </td>`
            : ''
        }
      </tr>`,
  );
  const table = log.length
    ? tableBox(
        'Delivery log',
        html`<table>
          <caption class="muted">
            The last ${DELIVERY_LOG_SIZE} attempts at most, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
              <th scope="col">Delivery</th>
              <th scope="col">Attempt</th>
              <th scope="col">Outcome</th>
              <th scope="col">HTTP status or failure</th>
              <th scope="col">Duration</th>
              <th scope="col">Response excerpt</th>
              ${redeliverable ? html`<th scope="col"><span class="muted">Actions</span></th>` : ''}
            </tr>
          </thead>
          <tbody>
            ${rows}
          </tbody>
        </table>`,
      )
    : html`<p>No delivery attempts${outcome || event ? ' match these filters' : ' yet'}.</p>`;
  const body = html`${shown}
    <dl class="facts">
      <dt>URL</dt>
      <dd class="mono">${outside(endpoint.url)}</dd>
      <dt>Events</dt>
      <dd>${outside(endpoint.events.join(', '))}</dd>
      <dt>State</dt>
      <dd>${state(endpoint.active)}</dd>
      <dt>Created</dt>
      <dd>${minute(endpoint.created_at)}</dd>
    </dl>
    ${controls}
    <h2>Delivery log</h2>
    ${admin && !endpoint.active ? html`<p class="muted">Enable the endpoint to redeliver or retry its events.</p>` : ''}
    ${filters} ${table}`;
  return page({ title: 'Webhook endpoint', session, current: CURRENT, body });
}

/** Who made a change, for its audit entry: in the org's log (of both modes), with the mode it was made in. */
function by(ctx: Koa.Context, session: DashboardSession) {
  return { orgId: session.orgId, livemode: livemodeOf(session), actor: session.email, address: ctx.ip };
}

/** What the endpoint's page says after a form sent the browser back to it (`?done=`): what happened, honestly. */
const DONE_NOTICES = new Map([
  ['test', 'Test event sent: its attempt is the newest in the log below.'],
  [
    'redelivery',
    'Redelivery queued: its attempt appears in the log below once it is sent, usually within seconds (reload to see it).',
  ],
  [
    'already-pending',
    'Nothing new was queued: a delivery of this event is already pending. Use "Retry now" on it to send it without waiting for its next retry.',
  ],
  [
    'made-due',
    'Retry made due now: its attempt appears in the log below once it is sent, usually within seconds (reload to see it).',
  ],
  ['already-due', 'Nothing changed: this delivery is already due, or being sent right now.'],
  [
    'not-pending',
    'Nothing was retried: this delivery is no longer pending (it succeeded or was given up). Use "Redeliver" to send its event again.',
  ],
]);

/** The `?done=` of each outcome of "Retry now". */
const RETRY_DONE: Record<webhooks.RetryNowOutcome, string> = {
  made_due: 'made-due',
  already_due: 'already-due',
  not_pending: 'not-pending',
};

/** The service's refusal of a switched-off endpoint in the dashboard's words, when it is switched off. */
async function inDashboardWords(
  env: DashboardEnv,
  session: DashboardSession,
  id: string,
  error: unknown,
): Promise<never> {
  const switchedOff =
    error instanceof DomainError &&
    error.code === 'invalid_state' &&
    !(await webhooks.getWebhook(env.deps.db, session.modeOrgId, id)).active;
  if (switchedOff) {
    throw new DomainError('invalid_state', 'This endpoint is disabled; enable it to redeliver or retry its events.');
  }
  throw error;
}

/** The endpoint id in the path (`:id`); throws not_found for one that is no UUID. */
function endpointId(ctx: Koa.Context): string {
  return uuidParam(pathParam(ctx, 'id'), 'webhook endpoint');
}

/** GET: the org's endpoints. */
async function showEndpoints(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  sendPage(ctx, 200, await listPage(env, session));
}

/** POST: adds an endpoint and shows its signing secret once; a refused one shows the form again. */
async function addEndpoint(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const url = field(ctx, 'url').trim();
  const events = fields(ctx, 'events');
  try {
    const input = webhooks.checkWebhookCreate({ url, events });
    const audit = { ...by(ctx, session), action: 'webhook.created', target: input.url };
    const { webhook, secret } = await webhooks.createWebhook(env.deps, session.modeOrgId, input, audit);
    const shown = [
      secretNotice(secret, 'Endpoint added. Its signing secret:'),
      html`<p><a href="${CURRENT}/${webhook.id}">Open the endpoint's page</a></p>`,
    ];
    sendPage(ctx, 201, await listPage(env, session, { shown }));
  } catch (error) {
    const problem = fieldProblemOf(error, ['url', 'events']);
    if (problem) {
      const shown = refusedNotice('The endpoint was not added', problem);
      sendPage(ctx, 400, await listPage(env, session, { shown, url, events, problem }));
      return;
    }
    if (!(error instanceof DomainError) || error.code !== 'forbidden') throw error;
    sendPage(ctx, 403, await listPage(env, session, { shown: notice('error', outside(error.message)), url, events }));
  }
}

/** GET: one endpoint's page, with what a form that sent the browser back here did. */
async function showEndpoint(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const done = DONE_NOTICES.get(doneOf(ctx, session) ?? '');
  sendPage(ctx, 200, await endpointPage(env, ctx, session, endpointId(ctx), done ? notice('info', done) : null));
}

/** POST: sends the endpoint a test event. */
async function sendTest(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const id = endpointId(ctx);
  await webhooks.sendTestEvent(env.deps, session.modeOrgId, id, null, {
    ...by(ctx, session),
    action: 'webhook.test_sent',
    target: id,
  });
  redirectAfterPost(ctx, doneLocation(`${CURRENT}/${id}`, session, 'test'));
}

/** POST: queues a delivery's event again. */
async function redeliver(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const id = endpointId(ctx);
  const deliveryId = uuidParam(field(ctx, 'delivery_id'), 'delivery');
  const audit = { ...by(ctx, session), action: 'webhook.redelivered', target: deliveryId };
  // A page shown before the endpoint was switched off is refused in the dashboard's words.
  const { queued } = await webhooks
    .redeliver(env.deps, session.modeOrgId, id, deliveryId, audit)
    .catch((error: unknown) => inDashboardWords(env, session, id, error));
  redirectAfterPost(ctx, doneLocation(`${CURRENT}/${id}`, session, queued ? 'redelivery' : 'already-pending'));
}

/** POST: makes a pending delivery's next retry due now. */
async function retryNow(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const id = endpointId(ctx);
  const deliveryId = uuidParam(field(ctx, 'delivery_id'), 'delivery');
  const audit = { ...by(ctx, session), action: 'webhook.retried', target: deliveryId };
  const { outcome } = await webhooks
    .retryNow(env.deps, session.modeOrgId, id, deliveryId, audit)
    .catch((error: unknown) => inDashboardWords(env, session, id, error));
  redirectAfterPost(ctx, doneLocation(`${CURRENT}/${id}`, session, RETRY_DONE[outcome]));
}

/** POST: rotates the endpoint's signing secret and shows the new one once. */
async function rotateSecret(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const id = endpointId(ctx);
  const audit = { ...by(ctx, session), action: 'webhook.secret_rotated', target: id };
  const expirePrevious = field(ctx, 'expire_previous') === 'true';
  const { secret } = await webhooks
    .rotateWebhookSecret(env.deps, session.modeOrgId, id, { expirePrevious, audit })
    .catch((error: unknown) => {
      // Over the limit of replaced secrets in their grace: in the dashboard's words.
      if (error instanceof DomainError && error.code === 'invalid_state') {
        throw new DomainError(
          'invalid_state',
          'This endpoint already has as many replaced secrets in their 24-hour grace as it may; rotate again ' +
            'once the oldest has expired, or tick "end the old secrets now" if one leaked.',
        );
      }
      throw error;
    });
  const shown = secretNotice(
    secret,
    expirePrevious
      ? 'New signing secret (the old ones stopped signing):'
      : 'New signing secret (the old one keeps signing for 24 hours):',
  );
  sendPage(ctx, 200, await endpointPage(env, ctx, session, id, shown));
}

/** POST handlers switching the endpoint off (`disable`) or on again (`enable`). */
function switchEndpoint(step: 'disable' | 'enable'): PageHandler {
  return async (ctx, session, env) => {
    const id = endpointId(ctx);
    const audit = { ...by(ctx, session), action: `webhook.${step}d`, target: id };
    await webhooks.updateWebhook(env.deps, session.modeOrgId, id, { active: step === 'enable' }, audit);
    redirectAfterPost(ctx, `${CURRENT}/${id}`);
  };
}

/** GET: the page asking to confirm the endpoint's deletion. */
async function confirmDelete(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const endpoint = await webhooks.getWebhook(env.deps.db, session.modeOrgId, endpointId(ctx));
  const question = html`Delete the endpoint <code>${outside(endpoint.url)}</code>? Nothing more is sent to it and its
    delivery log goes with it. This cannot be undone.`;
  const confirmation = confirmationPage({
    title: 'Delete webhook endpoint',
    session,
    current: CURRENT,
    question,
    action: `${CURRENT}/${endpoint.id}/delete`,
    button: 'Delete endpoint',
    cancel: `${CURRENT}/${endpoint.id}`,
  });
  sendPage(ctx, 200, confirmation);
}

/** POST: deletes the endpoint. */
async function deleteEndpoint(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const id = endpointId(ctx);
  const endpoint = await webhooks.getWebhook(env.deps.db, session.modeOrgId, id);
  const audit = { ...by(ctx, session), action: 'webhook.deleted', target: endpoint.url };
  await webhooks.deleteWebhook(env.deps, session.modeOrgId, id, audit);
  redirectAfterPost(ctx, CURRENT);
}

/** Registers the webhooks pages. */
export function webhookRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showEndpoints));
  router.post(CURRENT, formBody, action(env, addEndpoint, { once: true }));
  router.get(`${CURRENT}/:id`, view(env, showEndpoint));
  router.post(`${CURRENT}/:id/test`, formBody, action(env, sendTest));
  router.post(`${CURRENT}/:id/redeliver`, formBody, action(env, redeliver));
  router.post(`${CURRENT}/:id/retry`, formBody, action(env, retryNow));
  router.post(`${CURRENT}/:id/rotate`, formBody, action(env, rotateSecret, { once: true }));
  router.post(`${CURRENT}/:id/disable`, formBody, action(env, switchEndpoint('disable')));
  router.post(`${CURRENT}/:id/enable`, formBody, action(env, switchEndpoint('enable')));
  router.get(`${CURRENT}/:id/delete`, view(env, confirmDelete, { adminOnly: true }));
  router.post(`${CURRENT}/:id/delete`, formBody, action(env, deleteEndpoint));
}
