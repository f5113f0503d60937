// openapi-backend's routing failures as domain errors: an unknown path, and a known path with another method.
import type { Context, OpenAPIBackend } from 'openapi-backend';
import type Koa from 'koa';
import { DomainError } from '../errors.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** The notFound hook: throws not_found for a path no operation has. */
export function notFound(): never {
  throw new DomainError('not_found', 'No such route. See /api/v1/openapi.json for the operations.');
}

/** The methodNotAllowed hook for `api`: throws method_not_allowed with an Allow header listing the path's methods. */
export function methodNotAllowed(api: OpenAPIBackend) {
  return (context: Context, ctx: Koa.Context): never => {
    const allowed = METHODS.filter((method) => {
      try {
        return Boolean(api.router.matchOperation({ ...context.request, method }, true));
      } catch {
        return false;
      }
    }).map((method) => method.toUpperCase());
    throw new DomainError('method_not_allowed', `${ctx.method} is not allowed here; use ${allowed.join(', ')}.`, {
      headers: { Allow: allowed.join(', ') },
    });
  };
}
