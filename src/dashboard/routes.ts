// The dashboard under /dashboard: its pages, its assets and a page for every other path beneath it, on
// the app's router beside the probes and the docs, outside the API pipeline.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { AppDeps } from '../app-deps.js';
import { ASSETS } from './assets.js';
import { signInHashPool } from '../members/sign-in.js';
import { currentSession, sendPage, sendProblem, sessionFoundFor, TITLE_OF, type DashboardEnv } from './route-steps.js';
import { html } from './html.js';
import { notice, page } from './layout.js';
import { setPageHeaders } from './security.js';
import { signInRoutes } from './pages/sign-in.js';
import { overviewRoutes } from './pages/overview.js';
import { modeSwitchRoutes } from './pages/mode-switch.js';
import { keyRoutes } from './pages/keys.js';
import { webhookRoutes } from './pages/webhooks.js';
import { callRoutes } from './pages/calls.js';
import { contactRoutes } from './pages/contacts.js';
import { contactImportRoutes } from './pages/contact-imports.js';
import { suppressionRoutes } from './pages/suppressions.js';
import { campaignRoutes } from './pages/campaigns.js';
import { campaignFormRoutes } from './pages/campaigns-new.js';
import { memberRoutes } from './pages/members.js';
import { auditRoutes } from './pages/audit.js';

/** What a person is told of a fault the dashboard could not turn into its own answer. */
function faultMessage(ctx: Koa.Context, status: number, error: { message: string }): string {
  const reference = `If it keeps happening, give support this reference: ${ctx.response.get('Request-Id')}.`;
  if (status === 500) return `Something went wrong on our side. ${reference}`;
  if (status !== 503) return error.message;
  // The work goes on past the deadline: a change may still have been made.
  return ctx.method === 'GET' || ctx.method === 'HEAD'
    ? `The service could not answer in time; try again in a few seconds. ${reference}`
    : `The service could not answer in time. Your change may or may not have been made: check before trying again. ${reference}`;
}

/**
 * Shows a failure of a dashboard request (a 500, or a 503 when the database could not answer in time) as
 * a page with a way back; false for any other path. A member whose session was read before the failure
 * sees it as any signed-in page (test-mode banner and title included); the session is not read again
 * here, so a request that failed before or while reading it gets the page without one.
 */
export function dashboardFaultPage(ctx: Koa.Context, status: number, error: { message: string }): boolean {
  const path = ctx.path.toLowerCase();
  if (path !== '/dashboard' && !path.startsWith('/dashboard/')) return false;
  setPageHeaders(ctx);
  const back = html`<p><a href="/dashboard">Back to the overview</a></p>`;
  sendPage(
    ctx,
    status,
    page({
      title: TITLE_OF[status] ?? 'Error',
      session: sessionFoundFor(ctx),
      body: [notice('error', faultMessage(ctx, status, error)), back],
    }),
  );
  return true;
}

/** Answers with one of the dashboard's assets (revalidated before reuse). */
function serveAsset(asset: { type: string; body: string }): Koa.Middleware {
  return (ctx) => {
    setPageHeaders(ctx);
    ctx.set('Cache-Control', 'no-cache');
    ctx.type = asset.type;
    ctx.body = asset.body;
  };
}

/**
 * Answers any other path under /dashboard with a page saying there is none, drawn for the signed-in
 * member as their other pages are (the test-mode banner too), and without the session otherwise.
 */
function noSuchPage(env: DashboardEnv): Koa.Middleware {
  return async (ctx) => {
    setPageHeaders(ctx);
    sendProblem(ctx, await currentSession(env, ctx), 404, 'There is no dashboard page at this address.');
  };
}

/** Registers every dashboard route on `router`. */
export function dashboardRoutes(router: Router, deps: AppDeps): void {
  const env: DashboardEnv = {
    deps,
    lifetimes: { idleMs: deps.config.dashboardSessionIdleMs, absoluteMs: deps.config.dashboardSessionAbsoluteMs },
    secureCookies: deps.config.publicBaseUrl.startsWith('https:'),
    hashes: signInHashPool(),
  };
  for (const [path, asset] of Object.entries(ASSETS)) router.get(path, serveAsset(asset));
  signInRoutes(router, env);
  modeSwitchRoutes(router, env);
  overviewRoutes(router, env);
  keyRoutes(router, env);
  webhookRoutes(router, env);
  callRoutes(router, env);
  contactRoutes(router, env);
  contactImportRoutes(router, env);
  suppressionRoutes(router, env);
  campaignFormRoutes(router, env);
  campaignRoutes(router, env);
  memberRoutes(router, env);
  auditRoutes(router, env);
  router.all('/dashboard{/*rest}', noSuchPage(env));
}
