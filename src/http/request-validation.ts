// Validates a request against its operation with the Ajv validators openapi-backend compiled from the
// spec (`api.validator.getRequestValidatorsForOperation`), fed what Koa and the API's routes already
// parsed. openapi-backend's `validateRequest` parses the request once more on every call (headers
// copied through lodash, cookies parsed, the path template compiled again to read the path
// parameters): about 7% of the CPU of a cheap read (docs/architecture.md). The validators, their
// parameter object (`path`, `query`, `header`, `cookie`, `requestBody`) and the coercion are the same.
// What validateRequest does besides, for cookie parameters and for array, JSON-content and
// non-exploded query parameters, is not repeated: checkParameterKinds refuses, at start, a spec that
// declares any of them.
import type Koa from 'koa';
import type { ErrorObject } from 'ajv';
import type { OpenAPIBackend, Operation } from 'openapi-backend';
import { schemaAllowsType } from './per-operation.js';

/**
 * Throws, naming the operation and parameter, when an operation declares a parameter this validation
 * does not read as openapi-backend would: a cookie parameter, or a query parameter that is an array,
 * has JSON content or is not exploded. Called once at start.
 */
export function checkParameterKinds(operations: readonly Operation[]): void {
  for (const operation of operations) {
    for (const parameter of operation.parameters ?? []) {
      if (!('in' in parameter)) continue;
      const unsupported =
        parameter.in === 'cookie' ||
        (parameter.in === 'query' &&
          (parameter.content !== undefined || parameter.explode === false || schemaAllowsType(parameter, 'array')));
      if (unsupported) {
        throw new Error(
          `${operation.operationId}: the ${parameter.in} parameter ${parameter.name} is of a kind request validation does not read (src/http/request-validation.ts)`,
        );
      }
    }
  }
}

/** What a valid request's parameters became: path and query values coerced to their schema types. */
export interface ValidatedParameters {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
}

/**
 * Runs the operation's request validators over the request's path parameters (as the routes decoded
 * them), its query (parsed by openapi-backend's query parser), a copy of its headers and `body` (the
 * JSON object read, or undefined when none was). Returns the coerced parameters, or Ajv's errors with
 * the object they point into (to quote refused values from).
 */
export function validateOperationRequest(
  api: OpenAPIBackend,
  operation: Operation,
  ctx: Koa.Context,
  pathParameters: Record<string, string>,
  body: unknown,
): { errors: ErrorObject[]; validated: unknown } | { errors: null; coerced: ValidatedParameters } {
  const query = ctx.querystring
    ? (api.router.parseRequestQuery({
        method: operation.method,
        path: ctx.path,
        query: ctx.querystring,
        headers: {},
      }) as Record<string, unknown>)
    : {};
  const parameters: Record<string, unknown> = {
    path: { ...pathParameters },
    query,
    // Coercion may rewrite a header parameter's value: the request's own headers stay as they came.
    header: { ...ctx.headers },
    cookie: {},
  };
  if (body !== undefined) parameters.requestBody = body;
  const errors: ErrorObject[] = [];
  for (const validate of api.validator.getRequestValidatorsForOperation(operation.operationId!)) {
    if (!validate(parameters) && validate.errors) errors.push(...validate.errors);
  }
  if (errors.length > 0) return { errors, validated: parameters };
  return {
    errors: null,
    coerced: { params: parameters.path as Record<string, unknown>, query: parameters.query as Record<string, unknown> },
  };
}
