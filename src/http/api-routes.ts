// The API's routes: one @koa/router route per path of the spec, compiled once at start, each handing
// the request to the operation its method names (HEAD as GET). A known path with another method is
// 405 with the path's methods in Allow; a path no operation has is 404, before the key is read.
import Router from '@koa/router';
import type Koa from 'koa';
import type { OpenAPIBackend, Operation } from 'openapi-backend';
import { DomainError } from '../errors.js';
import { API_ROOT } from './backend.js';
import { declaresBody } from './json-body.js';
import type { OperationRunner } from './operation-pipeline.js';
import { stateOf } from './request-state.js';

/** The methods an operation can have, in the order an Allow header lists them. */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Throws not_found for a path no operation has. */
export function notFound(): never {
  throw new DomainError('not_found', 'No such route. See /api/v1/openapi.json for the operations.');
}

function methodNotAllowed(method: string, allowed: readonly string[]): never {
  throw new DomainError('method_not_allowed', `${method} is not allowed here; use ${allowed.join(', ')}.`, {
    headers: { Allow: allowed.join(', ') },
  });
}

/** `/calls/{id}` as @koa/router writes it: `/calls/:id`. */
function routerPath(template: string): string {
  return template.replace(/\{([^}]+)\}/g, ':$1');
}

/**
 * The API's operations (as openapi-backend reads them from the spec, global security included) behind
 * one route per path, each running `run` for the operation of the request's method. Paths are matched
 * exactly, case and trailing slash included (`/calls/` and `/CALLS` are not `/calls`), literal paths
 * before templated ones. The last middleware: a request no route takes ends in not_found, and whatever
 * the answer, a body left unread closes the connection after it.
 */
export function apiRoutes(api: OpenAPIBackend, run: OperationRunner): Koa.Middleware {
  const byPath = new Map<string, Map<string, Operation>>();
  for (const operation of api.router.getOperations()) {
    const methods = byPath.get(operation.path) ?? new Map<string, Operation>();
    methods.set(operation.method.toUpperCase(), operation);
    byPath.set(operation.path, methods);
  }
  const router = new Router({ prefix: API_ROOT, strict: true, sensitive: true });
  // A template's literal text decides between two templates that both match; the longest wins.
  const literalLength = (path: string) => path.replace(/\{[^}]+\}/g, '').length;
  const paths = [...byPath.keys()].sort((a, b) => literalLength(b) - literalLength(a));
  for (const path of paths) {
    const operations = byPath.get(path)!;
    const allowed = METHODS.filter((method) => operations.has(method));
    router.all(routerPath(path), async (ctx) => {
      const operation = operations.get(ctx.method === 'HEAD' ? 'GET' : ctx.method);
      if (!operation) methodNotAllowed(ctx.method, allowed);
      stateOf(ctx).operation = operation;
      await run(operation, ctx);
    });
  }
  const routes = router.routes() as unknown as Koa.Middleware;
  return async (ctx) => {
    const state = stateOf(ctx);
    state.hasBody = declaresBody(ctx);
    try {
      await routes(ctx, async () => notFound());
    } finally {
      // A body left unread (refused before it was needed: 404, 405, 401, ...) is not waited for.
      if (state.hasBody && !ctx.req.complete) ctx.set('Connection', 'close');
    }
  };
}
