// The dashboard under /dashboard: its pages, its assets and a page for every other path beneath it, on
// the app's router beside the probes and the docs, outside the API pipeline.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { AppDeps } from '../app-deps.js';
import { ASSETS } from './assets.js';
import { sendProblem, type DashboardEnv } from './route-steps.js';
import { setPageHeaders } from './security.js';
import { signInRoutes } from './pages/sign-in.js';
import { overviewRoutes } from './pages/overview.js';
import { keyRoutes } from './pages/keys.js';
import { webhookRoutes } from './pages/webhooks.js';
import { callRoutes } from './pages/calls.js';
import { contactRoutes } from './pages/contacts.js';
import { memberRoutes } from './pages/members.js';
import { auditRoutes } from './pages/audit.js';

/**
 * Shows a failure of a dashboard request (a 500, or a 503 when the database could not answer in time) as
 * a page; false for any other path.
 */
export function dashboardFaultPage(ctx: Koa.Context, status: number, error: { message: string }): boolean {
  if (ctx.path !== '/dashboard' && !ctx.path.startsWith('/dashboard/')) return false;
  setPageHeaders(ctx);
  sendProblem(ctx, null, status, error.message);
  return true;
}

/** Registers every dashboard route on `router`. */
export function dashboardRoutes(router: Router, deps: AppDeps): void {
  const env: DashboardEnv = {
    deps,
    lifetimes: { idleMs: deps.config.dashboardSessionIdleMs, absoluteMs: deps.config.dashboardSessionAbsoluteMs },
    secureCookies: deps.config.publicBaseUrl.startsWith('https:'),
  };
  for (const [path, asset] of Object.entries(ASSETS)) {
    router.get(path, (ctx) => {
      setPageHeaders(ctx);
      ctx.set('Cache-Control', 'no-cache');
      ctx.type = asset.type;
      ctx.body = asset.body;
    });
  }
  signInRoutes(router, env);
  overviewRoutes(router, env);
  keyRoutes(router, env);
  webhookRoutes(router, env);
  callRoutes(router, env);
  contactRoutes(router, env);
  memberRoutes(router, env);
  auditRoutes(router, env);
  router.all('/dashboard{/*rest}', (ctx) => {
    setPageHeaders(ctx);
    sendProblem(ctx, null, 404, 'There is no dashboard page at this address.');
  });
}
