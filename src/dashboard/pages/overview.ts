// The overview: the org, its plan and rate limit, its credits, its calls of the last 24 hours by status
// and its endpoints with failed attempts in the last 24 hours, all of the mode shown; in test mode, an
// admin may reset the test balance (after a confirmation page).
import type Router from '@koa/router';
import type Koa from 'koa';
import { countRecentCalls } from '../../calls/service.js';
import { DomainError } from '../../errors.js';
import { OPENING_TEST_BALANCE_PAISE, resetTestCredits } from '../../orgs/modes.js';
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../../orgs/policy.js';
import { getOrgWithPlan } from '../../orgs/service.js';
import { countRecentFailures, listWebhooks } from '../../webhooks/service.js';
import { MAX_ENDPOINTS_PER_ORG } from '../../webhooks/policy.js';
import { action, formBody, redirectAfterPost, sendPage, view, type DashboardEnv } from '../route-steps.js';
import { html } from '../html.js';
import { outside } from '../outside-text.js';
import { confirmationPage, notice, page, tableBox } from '../layout.js';
import { doneLocation, doneOf } from '../done-notices.js';
import { count, failedAttempts, rupees } from '../format.js';
import type { DashboardSession } from '../mode.js';

const CURRENT = '/dashboard';
const RESET = '/dashboard/test-balance/reset';
const DAY_MS = 86_400_000;
/** Calls per status counted at most on the overview (the page's cost stays flat for big orgs). */
const RECENT_CALLS_CAP = 10_000;

/** The 409 of a reset asked for in live mode, where no test balance is shown. */
function liveModeReset(): DomainError {
  return new DomainError(
    'invalid_state',
    'Switch test mode on to reset the test balance; live credits are never reset.',
  );
}

/** The credits of the mode shown, and for an admin in test mode the way to reset them. */
function credits(session: DashboardSession, balancePaise: number) {
  if (session.mode === 'live') return html`${rupees(balancePaise)}`;
  const reset =
    session.role === 'admin' ? html` <a class="button secondary" href="${RESET}">Reset test balance</a>` : '';
  return html`${rupees(balancePaise)} <span class="muted">(test credits)</span>${reset}`;
}

/** GET: the org, its plan and credits, the last day's calls by status and the endpoints failing. */
async function showOverview(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const { db, clock } = env.deps;
  const since = new Date(clock.now().getTime() - DAY_MS);
  const [org, calls, endpoints] = await Promise.all([
    getOrgWithPlan(db, session.modeOrgId),
    countRecentCalls(db, session.modeOrgId, since, RECENT_CALLS_CAP),
    listWebhooks(db, session.modeOrgId, { limit: MAX_ENDPOINTS_PER_ORG, offset: 0 }),
  ]);
  const failures = await countRecentFailures(
    db,
    endpoints.items.map((endpoint) => endpoint.id),
    since,
  );
  const failing = endpoints.items.filter((endpoint) => (failures.get(endpoint.id) ?? 0) > 0);
  const plan = org.plan_id
    ? html`${outside(org.plan_name)} (<code>${org.plan_id}</code>):
      ${count(org.rate_limit_per_minute ?? DEFAULT_RATE_LIMIT_PER_MINUTE)} API requests per
      minute${org.plan_active ? '' : html` <span class="state-bad">switched off: calls cannot be placed</span>`}`
    : html`<span class="state-bad">No plan: calls cannot be placed</span> (${count(DEFAULT_RATE_LIMIT_PER_MINUTE)} API
        requests per minute)`;
  const callRows = calls.map(
    (entry) =>
      html`<tr>
        <th scope="row"><a href="/dashboard/calls?status=${entry.status}">${entry.status}</a></th>
        <td>${entry.count >= RECENT_CALLS_CAP ? `${count(RECENT_CALLS_CAP)} or more` : count(entry.count)}</td>
      </tr>`,
  );
  const done =
    session.mode === 'test' && doneOf(ctx, session) === 'reset'
      ? notice('info', `Test balance reset to ${rupees(OPENING_TEST_BALANCE_PAISE)}.`)
      : '';
  const body = html`${done}
    <dl class="facts">
      <dt>Organisation</dt>
      <dd>${outside(org.name)} <span class="muted mono">${session.orgId}</span></dd>
      <dt>Plan</dt>
      <dd>${plan}</dd>
      <dt>Credits</dt>
      <dd>${credits(session, Number(org.balance_paise))}</dd>
    </dl>
    <h2>Calls in the last 24 hours</h2>
    ${
      calls.length
        ? tableBox(
            'Calls in the last 24 hours',
            html`<table>
              <thead>
                <tr>
                  <th scope="col">Status</th>
                  <th scope="col">Calls</th>
                </tr>
              </thead>
              <tbody>
                ${callRows}
              </tbody>
            </table>`,
          )
        : html`<p>No calls in the last 24 hours.</p>`
    }
    <h2>Webhook endpoints failing</h2>
    ${
      failing.length
        ? html`<ul>
            ${failing.map((endpoint) => html`<li><a href="/dashboard/webhooks/${endpoint.id}">${outside(endpoint.url)}</a>: ${failedAttempts(failures.get(endpoint.id) ?? 0)} in the last 24 hours</li>`)}
          </ul>`
        : html`<p>None of the ${endpoints.total} endpoints had a failed attempt in the last 24 hours.</p>`
    }`;
  sendPage(ctx, 200, page({ title: 'Overview', session, current: CURRENT, body }));
}

/** GET: the page asking an admin to confirm the test balance's reset. */
function confirmReset(ctx: Koa.Context, session: DashboardSession): Promise<void> {
  if (session.mode === 'live') return Promise.reject(liveModeReset());
  const question = html`Reset the test balance of ${outside(session.orgName)} to ${rupees(OPENING_TEST_BALANCE_PAISE)}?
  Credits held by test calls still running come back on top of it, less their charges, when those calls end. Live
  credits do not change.`;
  const confirmation = confirmationPage({
    title: 'Reset test balance',
    session,
    current: CURRENT,
    question,
    action: RESET,
    button: 'Reset test balance',
    cancel: CURRENT,
  });
  sendPage(ctx, 200, confirmation);
  return Promise.resolve();
}

/** POST: resets the test balance to the opening amount, with its audit entry (test mode's). */
async function resetBalance(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  if (session.mode === 'live') throw liveModeReset();
  await resetTestCredits(env.deps.db, session.orgId, OPENING_TEST_BALANCE_PAISE, {
    orgId: session.orgId,
    livemode: false,
    actor: session.email,
    address: ctx.ip,
    action: 'credits.test_reset',
    target: `test balance ${rupees(OPENING_TEST_BALANCE_PAISE)}`,
  });
  redirectAfterPost(ctx, doneLocation(CURRENT, session, 'reset'));
}

/** Registers the overview page at /dashboard and the test balance's reset. */
export function overviewRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showOverview));
  router.get(RESET, view(env, confirmReset, { adminOnly: true }));
  router.post(RESET, formBody, action(env, resetBalance));
}
