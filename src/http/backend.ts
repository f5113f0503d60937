// openapi-backend, configured through its documented options and handlers: it loads the spec, routes each
// request to its operation, authenticates it, runs the steps before validation in its post-security hook
// (rate limit, query checks, reading the body), validates it with the spec's Ajv set-up, and dispatches
// it to the typed handler registered for its operationId, whose answer it writes (checked against the
// spec in tests).
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Context, type Document } from 'openapi-backend';
import type Koa from 'koa';
import type { AppDeps } from '../app-deps.js';
import { createSpecAjv } from '../contract/ajv.js';
import type { HandlerMap, OperationId, OperationInput } from '../contract/operations.js';
import { projectFile } from '../project-files.js';
import type { ApiKeyAuthenticator } from '../orgs/authenticator.js';
import type { RateLimiter } from '../orgs/rate-limiter.js';
import type { Metrics } from '../observability/metrics.js';
import { bearerAuth, refuseUnauthenticated } from './authentication.js';
import { jsonBodyReader } from './json-body.js';
import { headerNamesOf, operationInput } from './operation-input.js';
import { takeRateLimitSlot } from './rate-limit.js';
import { checkQueryIntegers, checkRequest } from './request-checks.js';
import { stateOf } from './request-state.js';
import { writeResponse, type HandlerOutput } from './response.js';
import { methodNotAllowed, notFound } from './routing-errors.js';
import { validationError } from './validation-errors.js';

export const API_ROOT = '/api/v1';

/** The published spec (generated/openapi.json), loaded once. */
export const apiDocument = JSON.parse(readFileSync(projectFile('generated/openapi.json'), 'utf8')) as Document;

/** What admits a request to an operation: the key authenticator, the per-org limiter and the metrics they count in. */
export interface ApiGuards {
  authenticator: ApiKeyAuthenticator;
  limiter: RateLimiter;
  metrics: Metrics;
}

/**
 * openapi-backend's postSecurityHandler, for `guards`: once a request is authenticated (an unauthenticated
 * one is left to the unauthorized handler, its body unread), takes its rate-limit slot, checks its integer
 * query parameters, then reads its body, when it declares one and the operation takes one, into the
 * request openapi-backend validates next.
 */
function afterAuthentication(guards: ApiGuards, bodyTimeoutMs: number) {
  const readBody = jsonBodyReader(bodyTimeoutMs);
  return async (context: Context, ctx: Koa.Context): Promise<void> => {
    const { operation } = context;
    if (!context.security.authorized && operation.security?.length) return;
    await takeRateLimitSlot(guards.limiter, guards.metrics, ctx);
    checkQueryIntegers(operation, ctx.querystring);
    const state = stateOf(ctx);
    if (state.hasBody && state.auth && operation.requestBody) state.apiRequest!.body = await readBody(ctx);
  };
}

/**
 * Builds and initialises openapi-backend with every handler registered. Routing is exact (`/calls/` is
 * not `/calls`: openapi-backend ignores trailing slashes by default). `quick` skips its check of the
 * document against the OpenAPI 3.0 schema (which refuses valid 3.1; the spec is linted by 3.1-aware tools
 * instead); request validators are compiled here, response validators only when responses are checked.
 * Every refusal is thrown as a DomainError for the Koa error boundary to render. Throws at start if the
 * spec cannot be loaded.
 */
export async function createBackend(handlers: HandlerMap, deps: AppDeps, guards: ApiGuards): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: structuredClone(apiDocument),
    apiRoot: API_ROOT,
    ignoreTrailingSlashes: false,
    strict: true,
    quick: true,
    coerceTypes: true,
    customizeAjv: (_ajv, options) => createSpecAjv(options) as never,
  });
  api.registerSecurityHandler('bearerAuth', bearerAuth(guards.authenticator, guards.metrics));
  api.register({
    notFound,
    methodNotAllowed: methodNotAllowed(api),
    // The matched operation, for the error boundary (an answer's status must be one it declares).
    postRoutingHandler: (context: Context, ctx: Koa.Context) => {
      stateOf(ctx).operation = context.operation;
    },
    postSecurityHandler: afterAuthentication(guards, deps.config.bodyTimeoutMs),
    unauthorizedHandler: refuseUnauthenticated,
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
  return api;
}
