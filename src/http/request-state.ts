// What the pipeline records about a request in ctx.state, shared by the http/ middlewares and steps.
import type Koa from 'koa';
import type { Operation } from 'openapi-backend';
import type { AuthContext } from '../orgs/authenticator.js';

/** The request's facts as the pipeline learns them. */
export interface RequestState {
  requestId: string;
  /** The incoming W3C traceparent, when well formed. */
  traceparent: string | null;
  /** Whether the request declares a body (a non-zero Content-Length, or chunked transfer). */
  hasBody: boolean;
  operation?: Operation;
  auth?: AuthContext;
  /**
   * The time spent receiving the body, which the body's own timeout bounds (408), not the request
   * deadline: when it began (performance.now()), and how long it took once done.
   */
  bodyRead?: { startedAt: number; tookMs?: number };
}

/** The request's state. */
export function stateOf(ctx: Koa.Context): RequestState {
  return ctx.state;
}
