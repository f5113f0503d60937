// Security headers on every response (helmet, set up for a JSON API) and no caching of API answers.
// Routes that serve a page or a static file (the /docs page, its script) override what they need.
import type Koa from 'koa';
import helmet, { type HelmetOptions } from 'helmet';

/** An API's policy: nothing may load, frame or embed a response. */
const POLICY: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  frameguard: { action: 'deny' },
};

/**
 * Middleware running helmet's Node middleware with the API's policy on the request's own request and
 * response, then setting Cache-Control: no-store; what runs after it may replace any of them. Throws
 * what helmet reports.
 */
export function securityHeaders(): Koa.Middleware {
  const setHeaders = helmet(POLICY);
  return async (ctx, next) => {
    await new Promise<void>((resolve, reject) =>
      setHeaders(ctx.req, ctx.res, (error?: unknown) => (error ? reject(error) : resolve())),
    );
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
