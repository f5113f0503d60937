// One JSON log line per request, with the status actually sent.
import type Koa from 'koa';
import type { Logger } from 'pino';
import { stateOf } from './request-state.js';

/**
 * The path as logged: runs of 32 or more letters and digits (an API key's secret part, a webhook
 * secret, any other token a client pasted into a URL) are replaced. No id of the API is that long.
 */
export function loggablePath(path: string): string {
  return path.replace(/[A-Za-z0-9]{32,}/g, '[redacted]');
}

/** Paths of the probes, logged at debug: an orchestrator calls them every few seconds. */
const PROBES = new Set(['/healthz', '/readyz']);

/**
 * One JSON log line per request: method, path (see loggablePath), status, duration, request id,
 * traceparent, org. Probes are logged at debug, everything else at info. Runs outside the error
 * boundary, so it logs the status actually sent.
 */
export function accessLog(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      const level = PROBES.has(ctx.path) ? 'debug' : 'info';
      // The line is built only when it will be written.
      if (logger.isLevelEnabled(level)) logLine(ctx, started, level);
    }
  };

  function logLine(ctx: Koa.Context, started: number, level: 'debug' | 'info'): void {
    const state = stateOf(ctx);
    logger[level](
      {
        requestId: state.requestId,
        ...(state.traceparent ? { traceparent: state.traceparent } : {}),
        method: ctx.method,
        path: loggablePath(ctx.path),
        status: ctx.status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        orgId: state.auth?.orgId,
        operationId: state.operation?.operationId,
      },
      'request',
    );
  }
}
