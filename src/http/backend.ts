// openapi-backend, configured through its documented options and handlers: it loads the spec, routes each
// request to its operation, validates it with the spec's Ajv set-up, and dispatches it to the typed
// handler registered for its operationId, whose answer it writes (checked against the spec in tests).
import { readFileSync } from 'node:fs';
import { OpenAPIBackend, type Context, type Document } from 'openapi-backend';
import type Koa from 'koa';
import type { AppDeps } from '../app-deps.js';
import { createSpecAjv } from '../contract/ajv.js';
import type { HandlerMap, OperationId, OperationInput } from '../contract/operations.js';
import { projectFile } from '../project-files.js';
import { bearerAuth, unauthorized } from './authentication.js';
import { headerNamesOf, operationInput } from './operation-input.js';
import { checkRequest } from './request-checks.js';
import { stateOf } from './request-state.js';
import { writeResponse, type HandlerOutput } from './response.js';
import { methodNotAllowed, notFound } from './routing-errors.js';
import { validationError } from './validation-errors.js';

export const API_ROOT = '/api/v1';

/** The published spec (generated/openapi.json), loaded once. */
export const apiDocument = JSON.parse(readFileSync(projectFile('generated/openapi.json'), 'utf8')) as Document;

/**
 * Builds and initialises openapi-backend with every handler registered. Routing is exact (`/calls/` is
 * not `/calls`: openapi-backend ignores trailing slashes by default). `quick` skips its check of the
 * document against the OpenAPI 3.0 schema (which refuses valid 3.1; the spec is linted by 3.1-aware tools
 * instead); request validators are compiled here, response validators only when responses are checked.
 * Every refusal is thrown as a DomainError for the Koa error boundary to render. Throws at start if the
 * spec cannot be loaded.
 */
export async function createBackend(handlers: HandlerMap, deps: AppDeps): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: structuredClone(apiDocument),
    apiRoot: API_ROOT,
    ignoreTrailingSlashes: false,
    strict: true,
    quick: true,
    coerceTypes: true,
    customizeAjv: (_ajv, options) => createSpecAjv(options) as never,
  });
  api.registerSecurityHandler('bearerAuth', bearerAuth);
  api.register({
    notFound,
    methodNotAllowed: methodNotAllowed(api),
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
  return api;
}

/**
 * The last middleware of the API: hands the request (routed, authenticated, rate-limited, its body read)
 * to openapi-backend, which validates it and runs its handler, or refuses it.
 */
export function dispatch(api: OpenAPIBackend): Koa.Middleware {
  return async (ctx) => {
    await api.handleRequest(stateOf(ctx).apiRequest!, ctx);
  };
}
