// The openapi-backend instance, configured through its documented options and hooks: it routes each
// request to its typed handler by operationId, authenticates, rate-limits, validates with the spec's
// Ajv set-up, and writes (and optionally checks) the handler's response.
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Context, type Document } from 'openapi-backend';
import type Koa from 'koa';
import type { AppDeps } from '../app-deps.js';
import { createSpecAjv } from '../contract/ajv.js';
import type { HandlerMap, OperationId, OperationInput } from '../contract/operations.js';
import type { ApiKeyAuthenticator } from '../orgs/authenticator.js';
import type { RateLimiter } from '../orgs/rate-limiter.js';
import { projectFile } from '../project-files.js';
import { bearerAuth, rethrowAuthFault, unauthorized } from './authentication.js';
import { patchRouter } from './openapi-backend-patches.js';
import { headerNamesOf, operationInput } from './operation-input.js';
import { takeRateLimitSlot } from './rate-limit.js';
import { checkQueryIntegers, checkRequest } from './request-checks.js';
import { declaresBody, readJsonBody } from './request-body.js';
import { stateOf } from './request-state.js';
import { writeResponse, type HandlerOutput } from './response.js';
import { methodNotAllowed, notFound } from './routing-errors.js';
import { validationError } from './validation-errors.js';

export const API_ROOT = '/api/v1';

/**
 * Routing is exact: `/calls/` is not `/calls` (openapi-backend ignores trailing slashes by default), so
 * a trailing slash answers not_found instead of another operation's answer.
 */
export const IGNORE_TRAILING_SLASHES = false;

/** The published spec (generated/openapi.json), loaded once. */
export const apiDocument = JSON.parse(readFileSync(projectFile('generated/openapi.json'), 'utf8')) as Document;

/** What createBackend wires in besides the handlers. */
export interface BackendParts {
  deps: AppDeps;
  authenticator: ApiKeyAuthenticator;
  limiter: RateLimiter;
}

/**
 * Builds and initialises the backend. `quick` skips openapi-backend's check of the document against
 * the OpenAPI 3.0 schema (which refuses valid 3.1; the spec is linted by 3.1-aware tools instead) and
 * compiles validators on first use; request validators are compiled here, response validators only
 * when responses are checked. Throws at start if the spec cannot be loaded; request-time failures are
 * thrown as DomainError for the Koa error boundary to render.
 */
export async function createBackend(handlers: HandlerMap, parts: BackendParts): Promise<OpenAPIBackend> {
  const { deps, authenticator, limiter } = parts;
  const api = new OpenAPIBackend({
    definition: structuredClone(apiDocument),
    apiRoot: API_ROOT,
    ignoreTrailingSlashes: IGNORE_TRAILING_SLASHES,
    strict: true,
    quick: true,
    coerceTypes: true,
    customizeAjv: (_ajv, options) => createSpecAjv(options) as never,
  });
  api.registerSecurityHandler('bearerAuth', bearerAuth(authenticator));
  api.register({
    postRoutingHandler: (context: Context, ctx: Koa.Context) => {
      if (context.operation) stateOf(ctx).operation = context.operation;
    },
    notFound,
    methodNotAllowed: methodNotAllowed(api),
    // After authentication, before validation: every authenticated request counts against the limit,
    // and only then is its body read.
    postSecurityHandler: async (context: Context, ctx: Koa.Context) => {
      rethrowAuthFault(ctx, deps.metrics);
      if (!context.security?.authorized) return;
      await takeRateLimitSlot(limiter, deps.metrics, ctx);
      checkQueryIntegers(context.operation, ctx.querystring);
      await readBody(api, context, ctx, deps.config.bodyTimeoutMs);
    },
    unauthorizedHandler: unauthorized,
    validationFail: (context: Context) => {
      throw validationError(context.validation.errors ?? [], headerNamesOf(context.operation));
    },
    preOperationHandler: checkRequest,
    postResponseHandler: writeResponse(deps.config.validateResponses),
  });
  for (const operationId of Object.keys(handlers) as OperationId[]) {
    const handler = handlers[operationId] as (
      input: OperationInput<OperationId>,
      deps: AppDeps,
    ) => Promise<HandlerOutput>;
    api.register(operationId, (context: Context, ctx: Koa.Context) => handler(operationInput(context, ctx), deps));
  }
  await api.init();
  api.validator.preCompileRequestValidators();
  patchRouter(api.router);
  return api;
}

/**
 * Reads the body of an operation that takes one into the request openapi-backend validates, and parses
 * the request again with it. A body sent to an operation that takes none is left unread (refused in
 * checkRequest). Throws what readJsonBody throws.
 */
async function readBody(api: OpenAPIBackend, context: Context, ctx: Koa.Context, timeoutMs: number): Promise<void> {
  const state = stateOf(ctx);
  if (!state.hasBody || !context.operation.requestBody || !state.apiRequest) return;
  state.apiRequest.body = await readJsonBody(ctx, timeoutMs);
  context.request = api.router.parseRequest(state.apiRequest, context.operation);
}

/**
 * Koa middleware that hands every request under /api/v1 (and anything unmatched) to the backend. HEAD is
 * routed as GET; Koa then sends the GET answer's status and headers without its body.
 */
export function backendMiddleware(api: OpenAPIBackend): Koa.Middleware {
  return async (ctx) => {
    const state = stateOf(ctx);
    state.hasBody = declaresBody(ctx);
    state.apiRequest = {
      method: ctx.method === 'HEAD' ? 'GET' : ctx.method,
      path: ctx.path,
      query: ctx.querystring,
      headers: ctx.headers as Record<string, string | string[]>,
    };
    try {
      await api.handleRequest(state.apiRequest, ctx);
    } finally {
      // A body never read (refused before it was needed) is not waited for: the connection goes.
      if (state.hasBody && !ctx.req.complete) ctx.set('Connection', 'close');
      for (const [name, value] of Object.entries(state.rateLimitHeaders ?? {})) ctx.set(name, value);
    }
  };
}
