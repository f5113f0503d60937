// openapi-backend, configured through its documented options: it loads the spec, routes each request to
// its operation and compiles the request validators from the spec's Ajv set-up. The request pipeline
// that uses them is ./dispatch.ts; this module builds both and hands Koa requests to it.
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Document, type Request } from 'openapi-backend';
import type Koa from 'koa';
import { createSpecAjv } from '../contract/ajv.js';
import type { HandlerMap } from '../contract/operations.js';
import { projectFile } from '../project-files.js';
import { createDispatcher, type DispatchParts } from './dispatch.js';
import { patchRouter } from './openapi-backend-patches.js';
import { declaresBody } from './request-body.js';
import { stateOf } from './request-state.js';

export const API_ROOT = '/api/v1';

/**
 * Routing is exact: `/calls/` is not `/calls` (openapi-backend ignores trailing slashes by default), so
 * a trailing slash answers not_found instead of another operation's answer.
 */
export const IGNORE_TRAILING_SLASHES = false;

/** The published spec (generated/openapi.json), loaded once. */
export const apiDocument = JSON.parse(readFileSync(projectFile('generated/openapi.json'), 'utf8')) as Document;

/** Answers one API request (see createDispatcher). */
export type Backend = (req: Request, ctx: Koa.Context) => Promise<void>;

/**
 * Builds and initialises openapi-backend and the pipeline over it. `quick` skips openapi-backend's
 * check of the document against the OpenAPI 3.0 schema (which refuses valid 3.1; the spec is linted by
 * 3.1-aware tools instead) and compiles validators on first use; request validators are compiled here,
 * response validators only when responses are checked. Throws at start if the spec cannot be loaded;
 * request-time failures are thrown as DomainError for the Koa error boundary to render.
 */
export async function createBackend(handlers: HandlerMap, parts: DispatchParts): Promise<Backend> {
  const api = new OpenAPIBackend({
    definition: structuredClone(apiDocument),
    apiRoot: API_ROOT,
    ignoreTrailingSlashes: IGNORE_TRAILING_SLASHES,
    strict: true,
    quick: true,
    coerceTypes: true,
    customizeAjv: (_ajv, options) => createSpecAjv(options) as never,
  });
  await api.init();
  api.validator.preCompileRequestValidators();
  patchRouter(api.router);
  return createDispatcher(api, handlers, parts);
}

/**
 * Koa middleware that hands every request under /api/v1 (and anything unmatched) to the backend. HEAD is
 * routed as GET; Koa then sends the GET answer's status and headers without its body.
 */
export function backendMiddleware(backend: Backend): Koa.Middleware {
  return async (ctx) => {
    const state = stateOf(ctx);
    state.hasBody = declaresBody(ctx);
    const req: Request = {
      method: ctx.method === 'HEAD' ? 'GET' : ctx.method,
      path: ctx.path,
      query: ctx.querystring,
      headers: ctx.headers as Record<string, string | string[]>,
    };
    try {
      await backend(req, ctx);
    } finally {
      // A body never read (refused before it was needed) is not waited for: the connection goes.
      if (state.hasBody && !ctx.req.complete) ctx.set('Connection', 'close');
      for (const [name, value] of Object.entries(state.rateLimitHeaders ?? {})) ctx.set(name, value);
    }
  };
}
