// The per-org rate limit of authenticated requests, taken before the body is read or anything validated.
import type Koa from 'koa';
import type { RateLimiter } from '../orgs/rate-limiter.js';
import type { Metrics } from '../observability/metrics.js';
import { DomainError } from '../errors.js';
import { stateOf } from './request-state.js';

/**
 * Takes a slot in the caller's org window for an authenticated request and sets its X-RateLimit-*
 * headers on the response, which keeps them whatever answer follows (errors included). Throws
 * too_many_requests, with its own headers, when the window is full; does nothing for a request not
 * authenticated.
 */
export async function takeRateLimitSlot(limiter: RateLimiter, metrics: Metrics, ctx: Koa.Context): Promise<void> {
  const { auth } = stateOf(ctx);
  if (!auth) return;
  try {
    ctx.set((await limiter.take(auth.orgId, auth.rateLimitPerMinute)).headers);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'too_many_requests') {
      metrics.rateLimitRejections.inc({ reason: 'org_rate_limit' });
    }
    throw error;
  }
}
