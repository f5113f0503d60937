// Security headers on every response (helmet) and no caching of answers. The API's JSON answers get
// the headers that matter for a response no browser renders; the web pages (the dashboard, the /docs
// page) get helmet's whole set, as documents do. Routes that serve a page or a static file (the
// dashboard, the docs page, its script) override the Content-Security-Policy and caching they need.
import type Koa from 'koa';
import helmet, { type HelmetOptions } from 'helmet';

/** A web page's policy: nothing may load, frame or embed it unless its route allows more. */
const PAGE_POLICY = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  frameguard: { action: 'deny' },
} satisfies HelmetOptions;

/**
 * The API's policy: the page policy without the headers that only a rendered document uses (its
 * browsing-context group, referrer, DNS prefetching, and Internet Explorer's and Flash's options).
 */
const API_POLICY = {
  ...PAGE_POLICY,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
} satisfies HelmetOptions;

/** The paths of the web pages, matched without regard to case as their routers match them. */
const PAGE_PATHS = /^\/(dashboard|docs)(\/|$)/i;

/**
 * Middleware running helmet's Node middleware, with the page or the API policy by path, on the
 * request's own request and response, then setting Cache-Control: no-store; what runs after it may
 * replace any of them. Throws what helmet reports.
 */
export function securityHeaders(): Koa.Middleware {
  const forPages = helmet(PAGE_POLICY);
  const forApi = helmet(API_POLICY);
  return async (ctx, next) => {
    const setHeaders = PAGE_PATHS.test(ctx.path) ? forPages : forApi;
    await new Promise<void>((resolve, reject) =>
      setHeaders(ctx.req, ctx.res, (error?: unknown) => (error ? reject(error) : resolve())),
    );
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}
