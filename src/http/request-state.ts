// What the pipeline records about a request in ctx.state, shared by the http/ middlewares and hooks.
import type Koa from 'koa';
import type { Operation } from 'openapi-backend';
import type { AuthContext } from '../orgs/authenticator.js';

/** The request's facts as the pipeline learns them. */
export interface RequestState {
  requestId: string;
  /** The incoming W3C traceparent, when well formed. */
  traceparent: string | null;
  hasBody: boolean;
  operation?: Operation;
  auth?: AuthContext;
  /** A failure of the key lookup itself (not a bad key): answered as what it is, never as 401. */
  authFault?: unknown;
  rateLimitHeaders?: Record<string, string>;
}

/** The request's state. */
export function stateOf(ctx: Koa.Context): RequestState {
  return ctx.state as RequestState;
}
