// What happens to a request once its operation is known, in the order the design gives: authenticate
// (before any byte of the body is read), take a rate-limit slot, read the body, validate the request
// with openapi-backend against the spec, run the checks the schemas cannot express, then the typed
// handler, whose answer is written (checked against the spec when responses are validated).
import type Koa from 'koa';
import type { OpenAPIBackend, Operation, ParsedRequest } from 'openapi-backend';
import type { AppDeps } from '../app-deps.js';
import type { HandlerMap, OperationId, OperationInput } from '../contract/operations.js';
import { invalidField } from '../errors.js';
import { authenticate } from './authentication.js';
import type { ApiGuards } from './backend.js';
import { jsonBodyReader } from './json-body.js';
import { headerNamesOf, operationInput } from './operation-input.js';
import { takeRateLimitSlot } from './rate-limit.js';
import { checkQueryValues, checkRequest, decodes, malformedPathParameter } from './request-checks.js';
import { stateOf } from './request-state.js';
import { writeResponse, type HandlerOutput } from './response.js';
import { validationError } from './errors.js';
import { validateOperationRequest } from './request-validation.js';

/** Runs one request to the end of its operation; what refuses it is thrown for the error boundary. */
export type OperationRunner = (operation: Operation, ctx: Koa.Context) => Promise<void>;

type AnyHandler = (input: OperationInput<OperationId>, deps: AppDeps) => Promise<HandlerOutput>;

/**
 * The runner of every operation: `handlers` by operationId, `api` validating requests (and responses
 * when `deps.config.validateResponses`), `guards` admitting them. `state.hasBody` is set by the routes.
 */
export function operationPipeline(
  api: OpenAPIBackend,
  handlers: HandlerMap,
  deps: AppDeps,
  guards: ApiGuards,
): OperationRunner {
  const readBody = jsonBodyReader(deps.config.bodyTimeoutMs);
  const write = writeResponse(api, deps.config.validateResponses);
  return async (operation, ctx) => {
    const state = stateOf(ctx);
    if (operation.security?.length) await authenticate(guards.authenticator, guards.metrics, ctx);
    await takeRateLimitSlot(guards.limiter, guards.metrics, ctx);
    // A path parameter that is not valid percent-encoded text is named here, before validation decodes it.
    const malformed = decodes(ctx.path) ? null : malformedPathParameter(operation, ctx.path);
    if (malformed !== null) throw invalidField(malformed, 'is not valid percent-encoded text');
    checkQueryValues(operation, ctx.querystring);
    let body: unknown;
    if (state.hasBody && operation.requestBody) {
      body = await readBody(ctx);
      // Every body the API takes is an object: a JSON string, number or boolean is refused here, null
      // and arrays by the schema.
      if (typeof body !== 'object') throw invalidField('body', 'must be a JSON object');
    }
    const validation = validateOperationRequest(api, operation, ctx, body);
    if (validation.errors) throw validationError(validation.errors, headerNamesOf(operation), validation.validated);
    // Validation coerced the path and query parameters to their types (query integers as numbers).
    const parsed: ParsedRequest = {
      method: operation.method,
      path: ctx.path,
      params: validation.coerced.params as ParsedRequest['params'],
      query: validation.coerced.query as ParsedRequest['query'],
      headers: ctx.headers as Record<string, string | string[]>,
      cookies: {},
      requestBody: body,
    };
    checkRequest(operation, parsed, ctx);
    const handler = handlers[operation.operationId as OperationId] as AnyHandler;
    write(operation, await handler(operationInput(operation, parsed, ctx), deps), ctx);
  };
}
