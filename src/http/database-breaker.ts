// While the database is known to be down, API requests are answered 503 at once instead of each
// waiting for its own timeout; the readiness probe reopens the way when the database answers again.
import type Koa from 'koa';
import { serviceUnavailable } from '../errors.js';
import type { Readiness } from '../health/readiness.js';

/** Middleware refusing requests with 503 service_unavailable while `readiness` knows the database is down. */
export function databaseBreaker(readiness: Readiness): Koa.Middleware {
  return async (_ctx, next) => {
    if (readiness.databaseDown) throw serviceUnavailable();
    await next();
  };
}
