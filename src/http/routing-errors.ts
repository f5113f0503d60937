// Routing failures as domain errors: an unknown path, and a known path with another method.
import type { OpenAPIBackend, Request } from 'openapi-backend';
import type Koa from 'koa';
import { DomainError } from '../errors.js';

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

/** Throws not_found for a path no operation has. */
export function notFound(): never {
  throw new DomainError('not_found', 'No such route. See /api/v1/openapi.json for the operations.');
}

/** For `api`: throws method_not_allowed for `req`, with an Allow header listing its path's methods. */
export function methodNotAllowed(api: OpenAPIBackend) {
  return (req: Request, ctx: Koa.Context): never => {
    const allowed = METHODS.filter((method) => {
      try {
        return Boolean(api.router.matchOperation({ ...req, method }, true));
      } catch {
        return false;
      }
    }).map((method) => method.toUpperCase());
    throw new DomainError('method_not_allowed', `${ctx.method} is not allowed here; use ${allowed.join(', ')}.`, {
      headers: { Allow: allowed.join(', ') },
    });
  };
}
