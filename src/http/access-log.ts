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

/**
 * One JSON log line per request: method, path (see loggablePath), status, duration, request id, org.
 * Runs outside the error boundary, so it logs the status actually sent.
 */
export function accessLog(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // The line is built only when it will be written (LOG_LEVEL may be above info).
      if (logger.isLevelEnabled('info')) logLine(ctx, started);
    }
  };

  function logLine(ctx: Koa.Context, started: number): void {
    const state = stateOf(ctx);
    logger.info(
      {
        requestId: state.requestId,
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
