// The per-org rate limit of authenticated requests, taken before the body is read or anything validated.
import type Koa from 'koa';
import type { RateLimiter } from '../orgs/rate-limiter.js';
import type { Metrics } from '../observability/metrics.js';
import { DomainError } from '../errors.js';
import { stateOf } from './request-state.js';

/**
 * Middleware taking a slot in the caller's org window for every authenticated request, and sending
 * the X-RateLimit-* headers with whatever answer follows (errors included). Throws too_many_requests,
 * with its own headers, when the window is full.
 */
export function rateLimit(limiter: RateLimiter, metrics: Metrics): Koa.Middleware {
  return async (ctx, next) => {
    const { auth } = stateOf(ctx);
    if (!auth) return next();
    let headers: Record<string, string>;
    try {
      headers = (await limiter.take(auth.orgId, auth.rateLimitPerMinute)).headers;
    } catch (error) {
      if (error instanceof DomainError && error.code === 'too_many_requests') {
        metrics.rateLimitRejections.inc({ reason: 'org_rate_limit' });
      }
      throw error;
    }
    try {
      await next();
    } finally {
      ctx.set(headers);
    }
  };
}
