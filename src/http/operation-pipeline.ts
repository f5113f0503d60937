// What happens to a request once its operation is known, in the order the design gives: authenticate
// (before any byte of the body is read), take a rate-limit slot, read the body, validate the request
// with openapi-backend's documented validateRequest, run the checks the schemas cannot express, then
// the typed handler, whose answer is written (checked against the spec when responses are validated).
import type Koa from 'koa';
import type { ErrorObject } from 'ajv';
import type { OpenAPIBackend, Operation, ParsedRequest, Request } from 'openapi-backend';
import type { AppDeps } from '../app-deps.js';
import type { HandlerMap, OperationId, OperationInput } from '../contract/operations.js';
import { DomainError, invalidField } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';
import type { ApiKeyAuthenticator, AuthContext } from '../orgs/authenticator.js';
import type { RateLimiter } from '../orgs/rate-limiter.js';
import { validationError } from './errors.js';
import { bodyArrivesEmpty, jsonBodyReader } from './json-body.js';
import {
  checkQueryValues,
  checkRequest,
  decodes,
  malformedPathParameter,
  pathValues,
  perOperation,
} from './request-checks.js';
import { stateOf } from './request-state.js';
import { writeResponse, type HandlerOutput } from './response.js';

/** What admits a request to an operation: the key authenticator, the per-org limiter and the metrics they count in. */
export interface ApiGuards {
  authenticator: ApiKeyAuthenticator;
  limiter: RateLimiter;
  metrics: Metrics;
}

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
    // A chunked body of no bytes on an operation that takes none (an empty streamed POST) is no body; a
    // Content-Length above 0 always announces bytes.
    const chunked = ctx.get('content-length') === '';
    if (state.hasBody && chunked && !operation.requestBody && (await bodyArrivesEmpty(ctx, deps.config.bodyTimeoutMs)))
      state.hasBody = false;
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
    const parsed: ValidRequest = {
      method: operation.method,
      path: ctx.path,
      params: validation.coerced.params,
      query: validation.coerced.query,
      headers: ctx.headers as Record<string, string | string[]>,
      cookies: {},
      requestBody: body,
    };
    checkRequest(operation, parsed, ctx);
    const handler = handlers[operation.operationId as OperationId] as AnyHandler;
    write(operation, await handler(operationInput(operation, parsed, ctx), deps), ctx);
  };
}

/** The challenge a 401 carries (RFC 9110 §11.6.1): the API takes bearer keys. */
export const BEARER_CHALLENGE = 'Bearer';

/** Throws unauthorized, with the WWW-Authenticate challenge. */
export function unauthorized(): never {
  throw new DomainError(
    'unauthorized',
    'A valid API key is required in the Authorization header (Bearer svc_live_...).',
    { headers: { 'WWW-Authenticate': BEARER_CHALLENGE } },
  );
}

/**
 * Authenticates the request's API key: keeps the caller's context in the request state and returns it,
 * or throws unauthorized. Lookup failures propagate as they are (an address over its allowance of failed
 * attempts is counted in the rate-limit metrics).
 */
export async function authenticate(
  authenticator: ApiKeyAuthenticator,
  metrics: Metrics,
  ctx: Koa.Context,
): Promise<AuthContext> {
  let auth: AuthContext | null;
  try {
    auth = await authenticator.authenticate(ctx.get('authorization') || undefined, ctx.ip);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'too_many_requests') {
      metrics.rateLimitRejections.inc({ reason: 'auth_failures' });
    }
    throw error;
  }
  if (!auth) unauthorized();
  stateOf(ctx).auth = auth;
  return auth;
}

/**
 * Takes a slot in the caller's org window for an authenticated request and sets its X-RateLimit-*
 * headers on the response, which keeps them whatever answer follows (errors included). Throws
 * too_many_requests, with its own headers, when the window is full; does nothing for a request not
 * authenticated.
 */
export async function takeRateLimitSlot(limiter: RateLimiter, metrics: Metrics, ctx: Koa.Context): Promise<void> {
  const { auth } = stateOf(ctx);
  if (!auth) return;
  try {
    ctx.set((await limiter.take(auth.orgId, auth.rateLimitPerMinute)).headers);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'too_many_requests') {
      metrics.rateLimitRejections.inc({ reason: 'org_rate_limit' });
    }
    throw error;
  }
}

/** A request that passed validation, as openapi-backend's ParsedRequest with its fields' types. */
type ValidRequest = ParsedRequest<
  unknown,
  Record<string, unknown>,
  Record<string, unknown>,
  Record<string, string | string[]>
>;

/** What a handler receives, over every operation; validation against the spec gave each field its type. */
type Input = OperationInput<OperationId>;

/** What a valid request's parameters became: path and query values coerced to their schema types. */
export interface ValidatedParameters {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
}

/**
 * Validates the request in `ctx` against `operation`, with `body` (the JSON read, or undefined when
 * none was). Returns the coerced parameters, or Ajv's errors with the object they point into (its
 * path parameters, query and body, to quote refused values from).
 */
export function validateOperationRequest(
  api: OpenAPIBackend,
  operation: Operation,
  ctx: Koa.Context,
  body: unknown,
): { errors: ErrorObject[]; validated: unknown } | { errors: null; coerced: ValidatedParameters } {
  const request: Request = {
    method: ctx.method,
    path: ctx.path,
    // openapi-backend works on its own copy of the headers: coercion never rewrites the request's.
    headers: ctx.headers as Request['headers'],
    query: ctx.querystring,
  };
  if (body !== undefined) request.body = body;
  const result = api.validateRequest(request, operation);
  if (result.errors) {
    return {
      errors: result.errors,
      validated: { path: pathValues(operation, ctx.path), query: queryValues(ctx.querystring), requestBody: body },
    };
  }
  const coerced = result.coerced as { params?: Record<string, unknown>; query?: Record<string, unknown> };
  return { errors: null, coerced: { params: coerced.params ?? {}, query: coerced.query ?? {} } };
}

/** The query's values by name as validation saw them: one string, or an array when given more than once. */
function queryValues(querystring: string): Record<string, string | string[]> {
  const values: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(querystring)) {
    const earlier = values[name];
    values[name] = earlier === undefined ? value : [earlier, value].flat();
  }
  return values;
}

/** The operation's header parameters: lower-case name to the spec's spelling (worked out once per operation). */
export const headerNamesOf = perOperation((operation: Operation): ReadonlyMap<string, string> => {
  const names = new Map<string, string>();
  for (const parameter of operation.parameters ?? []) {
    if ('in' in parameter && parameter.in === 'header') names.set(parameter.name.toLowerCase(), parameter.name);
  }
  return names;
});

/** The declared header parameters of the operation, by their names in the spec. */
function declaredHeaders(operation: Operation, headers: Record<string, string | string[] | undefined>) {
  const picked: Record<string, string | undefined> = {};
  for (const [lower, name] of headerNamesOf(operation)) {
    const value = headers[lower];
    picked[name] = Array.isArray(value) ? value[0] : value;
  }
  return picked;
}

/** The handler input of an authenticated, validated request: params, query, headers, body, caller. */
export function operationInput(
  operation: Operation,
  request: ValidRequest,
  ctx: Koa.Context,
): OperationInput<OperationId> {
  const state = stateOf(ctx);
  return {
    params: request.params as Input['params'],
    query: request.query,
    headers: declaredHeaders(operation, request.headers),
    body: request.requestBody as Input['body'],
    auth: state.auth!,
    requestId: state.requestId,
    traceparent: state.traceparent,
  };
}
