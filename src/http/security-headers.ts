// Security headers on every response (helmet, set up for a JSON API) and no caching of API answers.
// Routes that serve a page or a static file (the /docs page, its script) override what they need.
import type Koa from 'koa';
import helmet from 'koa-helmet';

/** Middleware setting helmet's headers with an API's policy (nothing may load, frame or embed a response) and Cache-Control: no-store. */
export function securityHeaders(): Koa.Middleware {
  const headers = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
    frameguard: { action: 'deny' },
  });
  return async (ctx, next) => {
    ctx.set('Cache-Control', 'no-store');
    await headers(ctx, next);
  };
}
