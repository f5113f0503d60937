// The bearerAuth security scheme: resolves the API key to its org. A key that is unknown, malformed or
// revoked is refused with 401; a failure to look the key up at all is never reported as a bad key.
import type Koa from 'koa';
import { DomainError } from '../errors.js';
import type { ApiKeyAuthenticator, AuthContext } from '../orgs/authenticator.js';
import { stateOf } from './request-state.js';
import type { Metrics } from '../observability/metrics.js';

/**
 * The bearerAuth scheme: the caller's context, or false for a bad key. A failure that is not a bad key
 * (the database, or an address over its allowance of failed authentications) is kept in the request
 * state and rethrown by rethrowAuthFault, never reported as a bad key.
 */
export function bearerAuth(authenticator: ApiKeyAuthenticator) {
  return async (ctx: Koa.Context): Promise<AuthContext | false> => {
    const state = stateOf(ctx);
    try {
      const auth = await authenticator.authenticate(ctx.get('authorization') || undefined, ctx.ip);
      if (auth) state.auth = auth;
      return auth ?? false;
    } catch (error) {
      state.authFault = error;
      return false;
    }
  };
}

/** After authentication: rethrows a failure that is not a bad key, so it is answered as what it is. */
export function rethrowAuthFault(ctx: Koa.Context, metrics: Metrics): void {
  const { authFault } = stateOf(ctx);
  if (authFault === undefined) return;
  if (authFault instanceof DomainError && authFault.code === 'too_many_requests') {
    metrics.rateLimitRejections.inc({ reason: 'auth_failures' });
  }
  throw authFault;
}

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
