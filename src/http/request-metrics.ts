// Records every request in the process's metrics: how long it took, by operation, method and status,
// and how many are in flight. Runs outside the error boundary, so it sees the status actually sent.
import type Koa from 'koa';
import type { Metrics } from '../observability/metrics.js';
import { stateOf } from './request-state.js';

/** The operation label of a request outside the API's operations (probes, the root and docs, unknown paths). */
function routeOf(ctx: Koa.Context): string {
  if (ctx.path === '/healthz' || ctx.path === '/readyz') return ctx.path.slice(1);
  if (ctx.path === '/' || ctx.path.startsWith('/docs') || ctx.path.startsWith('/api/v1/openapi.')) return 'docs';
  return 'unmatched';
}

/** Middleware timing each request into http_request_duration_seconds and counting http_requests_in_flight. */
export function requestMetrics(metrics: Metrics): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    metrics.httpRequestsInFlight.inc();
    try {
      await next();
    } finally {
      metrics.httpRequestsInFlight.dec();
      metrics.httpRequestDuration.observe(
        {
          operation: stateOf(ctx).operation?.operationId ?? routeOf(ctx),
          method: ctx.method,
          status: String(ctx.status),
        },
        (performance.now() - started) / 1000,
      );
    }
  };
}
