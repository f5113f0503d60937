// What the pipeline records about a request in ctx.state, shared by the http/ middlewares and hooks.
import type Koa from 'koa';
import type { Operation, Request } from 'openapi-backend';
import type { AuthContext } from '../orgs/authenticator.js';

/** The request's facts as the pipeline learns them. */
export interface RequestState {
  requestId: string;
  /** The incoming W3C traceparent, when well formed. */
  traceparent: string | null;
  /** Whether the request declares a body (a non-zero Content-Length, or chunked transfer). */
  hasBody: boolean;
  /** The request as openapi-backend takes it; its body is set once read. */
  apiRequest?: Request;
  operation?: Operation;
  auth?: AuthContext;
  /** Why authentication failed, when it did (unauthorized, or the key could not be looked up). */
  authFailure?: unknown;
  /**
   * The time spent receiving the body, which the body's own timeout bounds (408), not the request
   * deadline: when it began (performance.now()), and how long it took once done.
   */
  bodyRead?: { startedAt: number; tookMs?: number };
}

/** The request's state. */
export function stateOf(ctx: Koa.Context): RequestState {
  return ctx.state as RequestState;
}
