// Every request has a deadline: past it, the client gets 503 service_unavailable with Retry-After
// instead of waiting on a database that does not answer. The work itself is bounded by the pool's
// timeouts and ends on its own; its late result is dropped. The time the client takes to send its
// body does not count: the body has its own timeout, answered 408 (json-body.ts).
import type Koa from 'koa';
import { serviceUnavailable } from '../errors.js';
import { waitsOnReceiver } from '../webhooks/policy.js';
import { stateOf } from './request-state.js';

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
