// The bearerAuth security scheme: resolves the API key to its org before anything else of the request is
// read. A key that is missing, unknown, malformed or revoked is refused with 401; a failure to look the
// key up at all (the database, an address over its allowance of failed attempts) is answered as what it is.
import type Koa from 'koa';
import { DomainError } from '../errors.js';
import type { ApiKeyAuthenticator, AuthContext } from '../orgs/authenticator.js';
import type { Metrics } from '../observability/metrics.js';
import { stateOf } from './request-state.js';

/** The challenge a 401 carries (RFC 9110 §11.6.1): the API takes bearer keys. */
export const BEARER_CHALLENGE = 'Bearer';

/** Throws unauthorized, with the WWW-Authenticate challenge. */
export function unauthorized(): never {
  throw new DomainError(
    'unauthorized',
    'A valid API key is required in the Authorization header (Bearer svc_live_...).',
    { headers: { 'WWW-Authenticate': BEARER_CHALLENGE } },
  );
}

/**
 * Authenticates the request's API key: keeps the caller's context in the request state and returns it,
 * or throws unauthorized. Lookup failures propagate as they are (an address over its allowance of failed
 * attempts is counted in the rate-limit metrics).
 */
export async function authenticate(
  authenticator: ApiKeyAuthenticator,
  metrics: Metrics,
  ctx: Koa.Context,
): Promise<AuthContext> {
  let auth: AuthContext | null;
  try {
    auth = await authenticator.authenticate(ctx.get('authorization') || undefined, ctx.ip);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'too_many_requests') {
      metrics.rateLimitRejections.inc({ reason: 'auth_failures' });
    }
    throw error;
  }
  if (!auth) unauthorized();
  stateOf(ctx).auth = auth;
  return auth;
}
