// Handler types derived from the generated operations, so the compiler checks every handler's contract.
import type { operations } from '../../generated/openapi.js';
import type { AppDeps } from '../app-deps.js';
import type { AuthContext } from '../orgs/authenticator.js';

/** Operations served by the API (the `on…` entries are webhook deliveries we send, not serve). */
export type OperationId = Exclude<keyof operations, `on${string}`>;

/** No parameters of a kind: an object type without fields, as `{}` reads in an intersection. */
type NoFields = Record<never, never>;
type Op<O extends OperationId> = operations[O];
type Responses<O extends OperationId> = Op<O>['responses'];
type SuccessStatus<O extends OperationId> = Extract<keyof Responses<O>, 200 | 201 | 202 | 204>;
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : undefined;
type ParamsOf<O extends OperationId, K extends 'path' | 'query' | 'header'> = Op<O>['parameters'] extends {
  [P in K]?: infer T;
}
  ? T extends undefined
    ? NoFields
    : NonNullable<T>
  : NoFields;
type BodyOf<O extends OperationId> =
  Op<O> extends { requestBody: { content: { 'application/json': infer B } } }
    ? B
    : Op<O> extends { requestBody?: { content: { 'application/json': infer B } } }
      ? B | undefined
      : undefined;

/** What a handler receives: validated, coerced input and the caller's org. */
export interface OperationInput<O extends OperationId> {
  params: ParamsOf<O, 'path'>;
  query: ParamsOf<O, 'query'>;
  headers: ParamsOf<O, 'header'>;
  body: BodyOf<O>;
  auth: AuthContext;
  requestId: string;
  /** The request's well-formed W3C traceparent header, or null; stored with the events it causes. */
  traceparent: string | null;
}

/** What a handler returns: one of the operation's declared success statuses with its exact body. */
export type HandlerResult<O extends OperationId> = {
  [S in SuccessStatus<O>]: {
    status: S;
    body: JsonOf<Responses<O>[S]>;
    headers?: Record<string, string>;
  };
}[SuccessStatus<O>];

export type OperationHandler<O extends OperationId> = (
  input: OperationInput<O>,
  deps: AppDeps,
) => Promise<HandlerResult<O>>;

/** Every API operation must have exactly one handler of the right type. */
export type HandlerMap = { [O in OperationId]: OperationHandler<O> };
