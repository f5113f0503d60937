// What a typed handler receives, taken from openapi-backend's parsed and validated request.
import type { Context, Operation } from 'openapi-backend';
import type Koa from 'koa';
import type { OperationId, OperationInput } from '../contract/operations.js';
import { stateOf } from './request-state.js';

/** The operation's header parameters: lower-case name to the spec's spelling. */
export function headerNamesOf(operation: Operation): Map<string, string> {
  const names = new Map<string, string>();
  for (const parameter of operation.parameters ?? []) {
    if ('in' in parameter && parameter.in === 'header') names.set(parameter.name.toLowerCase(), parameter.name);
  }
  return names;
}

/** The declared header parameters of the operation, by their names in the spec. */
export function declaredHeaders(operation: Operation, headers: Record<string, string | string[] | undefined>) {
  const picked: Record<string, string | undefined> = {};
  for (const [lower, name] of headerNamesOf(operation)) {
    const value = headers[lower];
    picked[name] = Array.isArray(value) ? value[0] : value;
  }
  return picked;
}

/** The handler input of an authenticated, validated request: params, query, headers, body, caller. */
export function operationInput(context: Context, ctx: Koa.Context): OperationInput<OperationId> {
  const state = stateOf(ctx);
  return {
    params: context.request.params,
    query: context.request.query,
    headers: declaredHeaders(context.operation, context.request.headers),
    body: context.request.requestBody,
    auth: state.auth!,
    requestId: state.requestId,
    traceparent: state.traceparent,
  } as unknown as OperationInput<OperationId>;
}
