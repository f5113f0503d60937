// The API's Koa middleware: hands each request to openapi-backend, which routes it once and runs the
// pipeline's hooks (authentication, rate limit, checks, body) before validating and dispatching it.
import type Koa from 'koa';
import type { OpenAPIBackend, Request } from 'openapi-backend';
import { invalidField } from '../errors.js';
import { authenticate } from './authentication.js';
import type { ApiGuards } from './backend.js';
import { declaresBody } from './json-body.js';
import { takeRateLimitSlot } from './rate-limit.js';
import { decodes, malformedPathParameter } from './request-checks.js';
import { stateOf } from './request-state.js';

/**
 * For a path with an escape that does not decode, which openapi-backend cannot parse into path
 * parameters: when it names a parameter of an operation, authenticates and rate-limits the request as
 * that operation would, then throws invalid_request naming the parameter. Any other path is left to
 * openapi-backend (404 or 405).
 */
async function refuseMalformedPath(api: OpenAPIBackend, request: Request, guards: ApiGuards, ctx: Koa.Context) {
  const operation = api.router.matchOperation(request);
  const name = operation ? malformedPathParameter(api, operation, request.path) : null;
  if (!operation || name === null) return;
  stateOf(ctx).operation = operation;
  if (operation.security?.length) await authenticate(guards.authenticator, guards.metrics, ctx);
  await takeRateLimitSlot(guards.limiter, guards.metrics, ctx);
  throw invalidField(name, 'is not valid percent-encoded text');
}

/**
 * The last middleware of the API: records the request as openapi-backend takes it and hands it over.
 * HEAD is handled as GET; Koa then sends the GET answer's status and headers without its body. A body
 * left unread (refused before it was needed) is not waited for: the connection closes after the answer.
 */
export function apiRequests(api: OpenAPIBackend, guards: ApiGuards): Koa.Middleware {
  return async (ctx) => {
    const state = stateOf(ctx);
    state.hasBody = declaresBody(ctx);
    const request: Request = {
      method: ctx.method === 'HEAD' ? 'GET' : ctx.method,
      path: ctx.path,
      query: ctx.querystring,
      headers: ctx.headers as Record<string, string | string[]>,
    };
    state.apiRequest = request;
    try {
      if (!decodes(request.path)) await refuseMalformedPath(api, request, guards, ctx);
      await api.handleRequest(request, ctx);
    } finally {
      if (state.hasBody && !ctx.req.complete) ctx.set('Connection', 'close');
    }
  };
}
