// Validates a request against its operation with openapi-backend's documented `validateRequest`: it
// parses the query (arrays, non-exploded and JSON-content parameters included), the path parameters
// and the cookies as the spec declares them, runs the Ajv validators compiled from the spec, and
// coerces path and query values to their schema types.
import type Koa from 'koa';
import type { ErrorObject } from 'ajv';
import type { OpenAPIBackend, Operation, Request } from 'openapi-backend';

/** What a valid request's parameters became: path and query values coerced to their schema types. */
export interface ValidatedParameters {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
}

/**
 * Validates the request in `ctx` against `operation`, with `body` (the JSON read, or undefined when
 * none was). Returns the coerced parameters, or Ajv's errors with the object they point into (its
 * query and body, to quote refused values from).
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
  if (result.errors)
    return { errors: result.errors, validated: { query: queryValues(ctx.querystring), requestBody: body } };
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
