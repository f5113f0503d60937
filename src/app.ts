// createApp(deps): the Koa middleware chain, in order, around the openapi-backend router.
import Koa from 'koa';
import Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import type { AppDeps } from './app-deps.js';
import { handlers } from './http/handler-map.js';
import { ApiKeyAuthenticator } from './orgs/authenticator.js';
import { backendMiddleware, createBackend } from './http/backend.js';
import { requestId } from './http/request-id.js';
import { accessLog } from './http/access-log.js';
import { errorBoundary } from './http/error-boundary.js';
import { bodyGuard } from './http/body-guard.js';
import { RateLimiter } from './orgs/rate-limiter.js';
import { healthRoutes } from './http/health.js';
import { docsRoutes, specRoutes } from './http/docs.js';
import { securityHeaders } from './http/security-headers.js';

/** Builds the HTTP application; throws when the spec cannot be loaded. */
export async function createApp(deps: AppDeps): Promise<Koa> {
  const authenticator = new ApiKeyAuthenticator(deps.db, deps.clock, deps.config.apiKeyCacheTtlMs);
  const limiter = new RateLimiter(deps.db, deps.clock);
  const api = await createBackend(handlers, { deps, authenticator, limiter });

  const router = new Router();
  healthRoutes(router, deps.db);
  specRoutes(router);
  docsRoutes(router);

  const app = new Koa();
  app.proxy = false;
  app.use(requestId());
  app.use(accessLog(deps.logger));
  app.use(errorBoundary(deps.logger, deps.config.validateResponses));
  app.use(securityHeaders());
  app.use(bodyGuard());
  app.use(
    bodyParser({
      enableTypes: ['json'],
      jsonLimit: '64kb',
      strict: true,
    }),
  );
  app.use(router.routes());
  app.use(backendMiddleware(api));
  return app;
}
