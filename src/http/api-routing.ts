// The first middleware of the API: finds the request's operation with openapi-backend's router, so the
// steps before validation (authentication, rate limit, body) know what the request is for.
import type Koa from 'koa';
import type { OpenAPIBackend } from 'openapi-backend';
import { declaresBody } from './json-body.js';
import { stateOf } from './request-state.js';

/**
 * Middleware recording the request as openapi-backend takes it and its operation, when one matches (an
 * unknown path or method is refused later by openapi-backend). HEAD is routed as GET; Koa then sends the
 * GET answer's status and headers without its body. A body left unread (refused before it was needed)
 * is not waited for: the connection closes after the answer.
 */
export function routeApiRequest(api: OpenAPIBackend): Koa.Middleware {
  return async (ctx, next) => {
    const state = stateOf(ctx);
    state.hasBody = declaresBody(ctx);
    state.apiRequest = {
      method: ctx.method === 'HEAD' ? 'GET' : ctx.method,
      path: ctx.path,
      query: ctx.querystring,
      headers: ctx.headers as Record<string, string | string[]>,
    };
    state.operation = api.router.matchOperation(state.apiRequest);
    try {
      await next();
    } finally {
      if (state.hasBody && !ctx.req.complete) ctx.set('Connection', 'close');
    }
  };
}
