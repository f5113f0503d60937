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
 * Logs a finished request, answered with the status now set, as one JSON line: method, path (see
 * loggablePath), status, duration, request id, traceparent, org. Probes are logged at debug, everything
 * else at info; the line is built only when it will be written.
 */
export function logRequest(logger: Logger, ctx: Koa.Context, durationMs: number): void {
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
    },
    'request',
  );
}
