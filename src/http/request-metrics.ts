// Records every request in the process's metrics: how long it took, by operation, method and status.
import type Koa from 'koa';
import type { Metrics } from '../observability/metrics.js';
import { stateOf } from './request-state.js';

/** The operation label of a request outside the API's operations (probes, the root and docs, unknown paths). */
function routeOf(ctx: Koa.Context): string {
  if (ctx.path === '/healthz' || ctx.path === '/readyz') return ctx.path.slice(1);
  if (ctx.path === '/' || ctx.path.startsWith('/docs') || ctx.path.startsWith('/api/v1/openapi.')) return 'docs';
  return 'unmatched';
}

/** Records a finished request, answered with the status now set, in voice_call_http_request_duration_seconds. */
export function recordRequest(metrics: Metrics, ctx: Koa.Context, durationMs: number): void {
  metrics.httpRequestDuration.observe(
    { operation: stateOf(ctx).operation?.operationId ?? routeOf(ctx), method: ctx.method, status: String(ctx.status) },
    durationMs / 1000,
  );
}
