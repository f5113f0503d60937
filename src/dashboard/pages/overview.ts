// The overview: the org, its plan and rate limit, its credits, its calls of the last 24 hours by status
// and its endpoints with failed attempts in the last 24 hours.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { Session } from '../../members/sessions.js';
import { countRecentCalls } from '../../calls/service.js';
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../../orgs/policy.js';
import { getOrgWithPlan } from '../../orgs/service.js';
import { countRecentFailures, listWebhooks } from '../../webhooks/service.js';
import { MAX_ENDPOINTS_PER_ORG } from '../../webhooks/policy.js';
import { sendPage, view, type DashboardEnv } from '../route-steps.js';
import { html } from '../html.js';
import { outside } from '../outside-text.js';
import { page } from '../layout.js';
import { count, failedAttempts, rupees } from '../format.js';

const DAY_MS = 86_400_000;
/** Calls per status counted at most on the overview (the page's cost stays flat for big orgs). */
const RECENT_CALLS_CAP = 10_000;

/** GET: the org, its plan and credits, the last day's calls by status and the endpoints failing. */
async function showOverview(ctx: Koa.Context, session: Session, env: DashboardEnv): Promise<void> {
  const { db, clock } = env.deps;
  const since = new Date(clock.now().getTime() - DAY_MS);
  const [org, calls, endpoints] = await Promise.all([
    getOrgWithPlan(db, session.orgId),
    countRecentCalls(db, session.orgId, since, RECENT_CALLS_CAP),
    listWebhooks(db, session.orgId, { limit: MAX_ENDPOINTS_PER_ORG, offset: 0 }),
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
  const body = html`<dl class="facts">
      <dt>Organisation</dt>
      <dd>${outside(org.name)} <span class="muted mono">${org.id}</span></dd>
      <dt>Plan</dt>
      <dd>${plan}</dd>
      <dt>Credits</dt>
      <dd>${rupees(Number(org.balance_paise))}</dd>
    </dl>
    <h2>Calls in the last 24 hours</h2>
    ${
      calls.length
        ? html`<table>
            <thead>
              <tr>
                <th scope="col">Status</th>
                <th scope="col">Calls</th>
              </tr>
            </thead>
            <tbody>
              ${callRows}
            </tbody>
          </table>`
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
  sendPage(ctx, 200, page({ title: 'Overview', session, current: '/dashboard', body }));
}

/** Registers the overview page at /dashboard. */
export function overviewRoutes(router: Router, env: DashboardEnv): void {
  router.get('/dashboard', view(env, showOverview));
}
