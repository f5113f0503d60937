// The audit log, for admins: changes to keys, endpoints, members and plans from the dashboard and the
// CLI, and sign-ins, newest first, each with its mode (test for changes to test data). The log is the
// org's whole, whichever mode the dashboard shows.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { DashboardSession } from '../mode.js';
import { listAudit } from '../../audit/service.js';
import { sendPage, view, type DashboardEnv } from '../route-steps.js';
import { html } from '../html.js';
import { page, tableBox } from '../layout.js';
import { second } from '../format.js';
import { outside } from '../outside-text.js';
import { AUDIT_PAGE_SIZE } from '../policy.js';

const CURRENT = '/dashboard/audit';

/** GET: the org's latest audit entries, newest first. */
async function showAudit(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const entries = await listAudit(env.deps.db, session.orgId, AUDIT_PAGE_SIZE);
  const body = entries.length
    ? tableBox(
        'Audit log',
        html`<table>
          <caption class="muted">
            The last ${AUDIT_PAGE_SIZE} entries at most, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Mode</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">On</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            ${entries.map(
              (entry) =>
                html`<tr>
                  <td class="when">${second(entry.at)}</td>
                  <td>${entry.livemode ? 'Live' : 'Test'}</td>
                  <td>${outside(entry.actor)}</td>
                  <td>${outside(entry.action)}</td>
                  <td class="mono">${entry.target ? outside(entry.target) : '—'}</td>
                  <td>${entry.address ? outside(entry.address) : '—'}</td>
                </tr>`,
            )}
          </tbody>
        </table>`,
      )
    : html`<p>Nothing recorded yet.</p>`;
  sendPage(ctx, 200, page({ title: 'Audit log', session, current: CURRENT, body }));
}

/** Registers the audit log page (admins only). */
export function auditRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showAudit, { adminOnly: true }));
}
