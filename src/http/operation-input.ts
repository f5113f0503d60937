// What a typed handler receives, taken from the request as it was parsed and validated.
import type { Operation, ParsedRequest } from 'openapi-backend';
import type Koa from 'koa';
import type { OperationId, OperationInput } from '../contract/operations.js';
import { perOperation } from './per-operation.js';
import { stateOf } from './request-state.js';

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
  request: ParsedRequest,
  ctx: Koa.Context,
): OperationInput<OperationId> {
  const state = stateOf(ctx);
  return {
    params: request.params,
    query: request.query,
    headers: declaredHeaders(operation, request.headers),
    body: request.requestBody,
    auth: state.auth!,
    requestId: state.requestId,
    traceparent: state.traceparent,
  } as unknown as OperationInput<OperationId>;
}
