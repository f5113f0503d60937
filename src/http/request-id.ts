// The first middleware of the chain: gives every request an id, echoed in the Request-Id header, and
// keeps its incoming traceparent in the request state (handlers pass it on to the events they cause).
import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import { parseTraceparent } from '../observability/trace-context.js';
import { stateOf } from './request-state.js';

const ID_BYTES = 8;
const POOL_IDS = 512;

/**
 * Middleware naming each request `req_<16 hex>` (cut from a pool of CSPRNG bytes refilled as it runs
 * out) and keeping a well-formed W3C traceparent header for the logs.
 */
export function requestId(): Koa.Middleware {
  let pool = Buffer.alloc(0);
  let offset = 0;
  return async (ctx, next) => {
    if (offset + ID_BYTES > pool.length) {
      pool = randomBytes(ID_BYTES * POOL_IDS);
      offset = 0;
    }
    const id = `req_${pool.toString('hex', offset, offset + ID_BYTES)}`;
    offset += ID_BYTES;
    const state = stateOf(ctx);
    state.requestId = id;
    state.traceparent = parseTraceparent(ctx.get('traceparent') || undefined);
    ctx.set('Request-Id', id);
    await next();
  };
}
