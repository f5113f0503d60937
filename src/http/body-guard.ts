// Before the body parser: notes whether a request has a body and refuses bodies that are not JSON.
import type Koa from 'koa';
import { DomainError } from '../errors.js';
import { stateOf } from './request-state.js';

/**
 * Records whether a request carries a body and refuses bodies that are not JSON, before the body
 * parser (which would silently ignore them) runs.
 */
export function bodyGuard(): Koa.Middleware {
  return async (ctx, next) => {
    const length = ctx.get('content-length');
    const hasBody = (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== '';
    stateOf(ctx).hasBody = hasBody;
    if (hasBody && !ctx.is('application/json')) {
      throw new DomainError('invalid_request', 'Content-Type: request bodies must be sent as application/json', {
        param: 'Content-Type',
        details: { 'Content-Type': ['must be application/json'] },
      });
    }
    await next();
  };
}
