// Routing failures as domain errors, as openapi-backend's notFound and methodNotAllowed handlers: an
// unknown path, and a known path with another method.
import type { Context, OpenAPIBackend } from 'openapi-backend';
import type Koa from 'koa';
import { DomainError } from '../errors.js';
import { stateOf } from './request-state.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Throws not_found for a path no operation has. */
export function notFound(): never {
  throw new DomainError('not_found', 'No such route. See /api/v1/openapi.json for the operations.');
}

/** For `api`: throws method_not_allowed, with an Allow header listing the methods of the request's path. */
export function methodNotAllowed(api: OpenAPIBackend) {
  return (_context: Context, ctx: Koa.Context): never => {
    const request = stateOf(ctx).apiRequest!;
    const allowed = METHODS.filter((method) => api.router.matchOperation({ ...request, method }) !== undefined).map(
      (method) => method.toUpperCase(),
    );
    throw new DomainError('method_not_allowed', `${ctx.method} is not allowed here; use ${allowed.join(', ')}.`, {
      headers: { Allow: allowed.join(', ') },
    });
  };
}
