// The middlewares around every request, in the order app.ts chains them: the request lifecycle (id,
// traceparent, metrics and the access log), security headers, the request deadline and the database
// breaker. The error boundary is in errors.ts; the API's own routes in api-routes.ts.
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Readiness } from '../health/readiness.js';
import { randomBytes } from 'node:crypto';
import helmet, { type HelmetOptions } from 'helmet';
import type { Metrics } from '../observability/metrics.js';
import { parseTraceparent } from '../observability/trace-context.js';
import { stateOf } from './request-state.js';
import { serviceUnavailable } from '../errors.js';
import { waitsOnReceiver } from '../webhooks/policy.js';

/**
 * Middleware opening and closing every request, in one function rather than a middleware each (every
 * middleware is one more async frame per request). Before: the request id, the incoming traceparent and
 * the Request-Id header. After the answer is settled (it runs outside the error boundary, so with the
 * status actually sent): the metrics, `Connection: close` while the process drains for a shutdown, and,
 * once the answer is out or the client gone, the access log line. Never throws.
 */
export function requestLifecycle(deps: { metrics: Metrics; logger: Logger; readiness: Readiness }): Koa.Middleware {
  const nextId = requestIds();
  return async (ctx, next) => {
    const started = performance.now();
    const state = stateOf(ctx);
    state.requestId = nextId();
    state.traceparent = parseTraceparent(ctx.get('traceparent') || undefined);
    ctx.res.setHeader('Request-Id', state.requestId);
    deps.metrics.httpRequestsInFlight.inc();
    try {
      await next();
    } finally {
      deps.metrics.httpRequestsInFlight.dec();
      if (deps.readiness.draining) ctx.set('Connection', 'close');
      const durationMs = performance.now() - started;
      recordRequest(deps.metrics, ctx, durationMs);
      // Logged once the answer has gone out, or the client has gone: the line says which.
      if (ctx.res.destroyed) logRequest(deps.logger, ctx, durationMs);
      else ctx.res.once('close', () => logRequest(deps.logger, ctx, durationMs));
    }
  };
}

const ID_BYTES = 8;
const POOL_IDS = 512;

/** A source of request ids (`req_` and 16 hex digits), cut from a pool of CSPRNG bytes refilled as it runs out. */
function requestIds(): () => string {
  let pool = Buffer.alloc(0);
  let offset = 0;
  return () => {
    if (offset + ID_BYTES > pool.length) {
      pool = randomBytes(ID_BYTES * POOL_IDS);
      offset = 0;
    }
    const id = `req_${pool.toString('hex', offset, offset + ID_BYTES)}`;
    offset += ID_BYTES;
    return id;
  };
}

/**
 * The path as logged: runs of 32 or more letters and digits (an API key's secret part, a webhook
 * secret, any other token a client pasted into a URL) are replaced. No id of the API is that long.
 */
function loggablePath(path: string): string {
  return path.replace(/[A-Za-z0-9]{32,}/g, '[redacted]');
}

/** Paths of the probes, logged at debug: an orchestrator calls them every few seconds. */
const PROBES = new Set(['/healthz', '/readyz']);

/**
 * Logs a finished request as one JSON line: method, path (see loggablePath), the status it was answered
 * with, its duration (to the answer's start), request id, traceparent, org, and `clientClosed` when the
 * client closed the connection before the whole answer was sent. Probes are logged at debug, everything
 * else at info; the line is built only when it will be written.
 */
function logRequest(logger: Logger, ctx: Koa.Context, durationMs: number): void {
  const level = PROBES.has(ctx.path) ? 'debug' : 'info';
  if (!logger.isLevelEnabled(level)) return;
  const state = stateOf(ctx);
  logger[level](
    {
      requestId: state.requestId,
      ...(state.traceparent ? { traceparent: state.traceparent } : {}),
      method: ctx.method,
      path: loggablePath(ctx.path),
      status: ctx.status,
      durationMs: Math.round(durationMs * 10) / 10,
      orgId: state.auth?.orgId,
      operationId: state.operation?.operationId,
      ...(ctx.res.writableFinished ? {} : { clientClosed: true }),
    },
    'request',
  );
}

/** The operation label of a request outside the API's operations (probes, the root and docs, unknown paths). */
function routeOf(ctx: Koa.Context): string {
  if (ctx.path === '/healthz' || ctx.path === '/readyz') return ctx.path.slice(1);
  if (ctx.path === '/' || ctx.path.startsWith('/docs') || ctx.path.startsWith('/api/v1/openapi.')) return 'docs';
  return 'unmatched';
}

/** Records a finished request, answered with the status now set, in voice_call_http_request_duration_seconds. */
function recordRequest(metrics: Metrics, ctx: Koa.Context, durationMs: number): void {
  metrics.httpRequestDuration.observe(
    { operation: stateOf(ctx).operation?.operationId ?? routeOf(ctx), method: ctx.method, status: String(ctx.status) },
    durationMs / 1000,
  );
}

// Security headers on every response (helmet) and no caching of answers. The API's JSON answers get
// the headers that matter for a response no browser renders; the web pages (the dashboard, the /docs
// page) get helmet's whole set, as documents do, and override the policy and caching they need.

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
      setHeaders(ctx.req, ctx.res, (error?: unknown) =>
        error ? reject(error instanceof Error ? error : new Error('helmet failed', { cause: error })) : resolve(),
      ),
    );
    ctx.set('Cache-Control', 'no-store');
    await next();
  };
}

// Past its deadline a request is answered 503 with Retry-After instead of waiting on a database that
// does not answer; the work itself is bounded by the pool's timeouts and its late result is dropped.
// The time the client takes to send its body does not count: the body has its own timeout (408).

/**
 * Middleware answering 503 once a request has run `timeoutMs`, or `timeoutMs + receiverWaitMs` for a
 * request that waits on a webhook receiver (webhooks/policy.ts says which). Place it inside the error
 * boundary.
 */
export function requestDeadline(timeoutMs: number, receiverWaitMs: number): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      const check = () => {
        const state = stateOf(ctx);
        const bodyMs = state.bodyRead ? (state.bodyRead.tookMs ?? performance.now() - state.bodyRead.startedAt) : 0;
        const waits = waitsOnReceiver({
          method: ctx.method,
          path: ctx.path,
          operationId: state.operation?.operationId,
        });
        const limit = timeoutMs + bodyMs + (waits ? receiverWaitMs : 0);
        const left = limit - (performance.now() - started);
        if (left > 0) timer = setTimeout(check, left);
        else reject(serviceUnavailable('The request could not be answered in time'));
      };
      timer = setTimeout(check, timeoutMs);
    });
    const work = next();
    // The work goes on after the deadline; what it throws then has no one to answer.
    work.catch(() => undefined);
    try {
      await Promise.race([work, expired]);
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * Middleware refusing requests with 503 service_unavailable while `readiness` knows the database is
 * down, instead of each waiting for its own timeout; the readiness probe reopens the way.
 */
export function databaseBreaker(readiness: Readiness): Koa.Middleware {
  return async (_ctx, next) => {
    if (readiness.databaseDown) throw serviceUnavailable();
    await next();
  };
}
