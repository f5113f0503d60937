// While the process drains for a shutdown, every answer ends its keep-alive connection.
import type Koa from 'koa';
import type { Readiness } from '../health/readiness.js';

/** Middleware adding `Connection: close` to every response once draining has begun. */
export function closeConnectionsWhenDraining(readiness: Readiness): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } finally {
      if (readiness.draining) ctx.set('Connection', 'close');
    }
  };
}
