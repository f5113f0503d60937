// The API's routes: openapi-backend, configured through its documented options, loads the spec and
// gives its operations (global security included) to one @koa/router route per path, compiled once at
// start, each handing the request to the operation its method names (HEAD as GET). A known path with
// another method is 405 with the path's methods in Allow; a path no operation has is 404, before the
// key is read. Only openapi-backend's documented API is used (docs/architecture.md lists it).
import { readFileSync } from 'node:fs';
import Router from '@koa/router';
import type Koa from 'koa';
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import { createSpecAjv } from '../contract/ajv.js';
import { DomainError } from '../errors.js';
import { projectFile } from '../project-files.js';
import { declaresBody } from './json-body.js';
import type { OperationRunner } from './operation-pipeline.js';
import { stateOf } from './request-state.js';

export const API_ROOT = '/api/v1';

/** The published spec (generated/openapi.json), loaded once. */
export const apiDocument = JSON.parse(readFileSync(projectFile('generated/openapi.json'), 'utf8')) as Document;

/**
 * Builds and initialises openapi-backend over `document` (the published spec unless a test serves a
 * variant). `quick` skips its check of the document against the OpenAPI 3.0 schema (which refuses
 * valid 3.1; the spec is linted by 3.1-aware tools instead) and compiles each operation's validators
 * on its first request. Query and path parameters are coerced to their schema types as they are
 * validated. Throws at start if the spec cannot be loaded.
 */
export async function createBackend(document: Document = apiDocument): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: structuredClone(document),
    apiRoot: API_ROOT,
    ignoreTrailingSlashes: false,
    strict: true,
    quick: true,
    coerceTypes: true,
    customizeAjv: (_ajv, options) => createSpecAjv(options),
  });
  await api.init();
  return api;
}

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
      await routes(ctx, () => Promise.resolve().then(notFound));
    } finally {
      // A body left unread (refused before it was needed: 404, 405, 401, ...) is not waited for.
      if (state.hasBody && !ctx.req.complete) ctx.set('Connection', 'close');
    }
  };
}
