// createApp(deps): the Koa middleware chain, in order, ending in the API: its routes find each request's
// operation, whose pipeline authenticates, rate-limits and reads the body before openapi-backend
// validates the request and the typed handler answers it.
import type http from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import type { Document } from 'openapi-backend';
import type { AppDeps } from './app-deps.js';
import { handlers } from './http/handler-map.js';
import { ApiKeyAuthenticator } from './orgs/authenticator.js';
import { API_ROOT, apiRoutes, createBackend } from './http/api-routes.js';
import { operationPipeline, type ApiGuards } from './http/operation-pipeline.js';
import { databaseBreaker, requestDeadline, requestLifecycle, securityHeaders } from './http/middleware.js';
import { errorBoundary } from './http/errors.js';
import { RateLimiter } from './orgs/rate-limiter.js';
import { healthRoutes } from './http/health.js';
import { docsRoutes, PUBLISHED, rootRoutes, specRoutes } from './http/docs.js';
import { providerEventRoutes } from './http/provider-events.js';
import { dashboardFaultPage, dashboardRoutes } from './dashboard/routes.js';
import { DELIVERY_TIMEOUT_MS } from './webhooks/policy.js';

/** Paths under the API root that are served by the router rather than by the contract's operations. */
const ROUTED_UNDER_API = new Set<string>([PUBLISHED.specJson, PUBLISHED.specYaml]);

/**
 * Builds the HTTP application serving the API of `document` (the published spec unless a test serves a
 * variant); throws when the spec cannot be loaded.
 */
export async function createApp(deps: AppDeps, document?: Document): Promise<Koa> {
  const guards: ApiGuards = {
    authenticator: new ApiKeyAuthenticator(deps.db, deps.clock, {
      cacheTtlMs: deps.config.apiKeyCacheTtlMs,
      failuresPerMinute: deps.config.authFailuresPerMinute,
    }),
    limiter: new RateLimiter(deps.db, deps.clock),
    metrics: deps.metrics,
  };
  const api = await createBackend(document);

  const router = new Router();
  healthRoutes(router, deps.readiness);
  specRoutes(router);
  docsRoutes(router);
  rootRoutes(router);
  providerEventRoutes(router, deps);
  dashboardRoutes(router, deps);

  const app = new Koa();
  // X-Forwarded-For names the client only behind as many proxies as the operator says there are.
  app.proxy = deps.config.trustProxyHops > 0;
  app.maxIpsCount = deps.config.trustProxyHops;
  app.use(requestLifecycle(deps));
  app.use(securityHeaders());
  app.use(errorBoundary(deps.logger, deps.readiness, deps.config.validateResponses, dashboardFaultPage));
  app.use(requestDeadline(deps.config.requestTimeoutMs, Math.max(DELIVERY_TIMEOUT_MS, deps.delivery.leaseMs)));
  // The router's routes are the probes, the docs and the published spec: API paths skip its matching.
  const routes = router.routes() as unknown as Koa.Middleware;
  app.use(async (ctx, next) => {
    if (ctx.path.startsWith(`${API_ROOT}/`) && !ROUTED_UNDER_API.has(ctx.path)) await next();
    else await routes(ctx, next);
  });
  app.use(databaseBreaker(deps.readiness));
  app.use(apiRoutes(api, operationPipeline(api, handlers, deps, guards)));
  return app;
}

/** The app as a Node request listener, for http.createServer and startHttpServer. */
export function requestListener(app: Koa): http.RequestListener {
  const handle = app.callback();
  // Koa settles each request's failure itself (ctx.onerror answers it and emits 'error'), so the promise
  // it returns never rejects and nothing waits for it.
  return (request, response) => void handle(request, response);
}
