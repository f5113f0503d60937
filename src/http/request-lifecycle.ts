// The outermost middleware: what happens around every request, in one function instead of a middleware
// each (every middleware is one more async frame per request). Before: the request id, the incoming
// traceparent and the Request-Id header. After the answer is settled (below the error
// boundary, so with the status actually sent): the metrics, the access log line, and `Connection: close`
// while the process drains for a shutdown.
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { Readiness } from '../health/readiness.js';
import type { Metrics } from '../observability/metrics.js';
import { parseTraceparent } from '../observability/trace-context.js';
import { logRequest } from './access-log.js';
import { requestIds } from './request-id.js';
import { recordRequest } from './request-metrics.js';
import { stateOf } from './request-state.js';

/** Middleware opening and closing every request (see above); never throws. */
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
      logRequest(deps.logger, ctx, durationMs);
    }
  };
}
