// The per-org rate limit of authenticated requests, taken before the request is validated.
import type Koa from 'koa';
import type { RateLimiter } from '../orgs/rate-limiter.js';
import type { Metrics } from '../observability/metrics.js';
import { DomainError } from '../errors.js';
import { stateOf } from './request-state.js';

/**
 * In postSecurityHandler: takes a slot in the caller's org window and keeps the X-RateLimit-* headers
 * for the response (sent with errors too). Throws too_many_requests when the window is full.
 */
export async function takeRateLimitSlot(limiter: RateLimiter, metrics: Metrics, ctx: Koa.Context): Promise<void> {
  const state = stateOf(ctx);
  if (!state.auth) return;
  try {
    const outcome = await limiter.take(state.auth.orgId, state.auth.rateLimitPerMinute);
    state.rateLimitHeaders = outcome.headers;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'too_many_requests') {
      metrics.rateLimitRejections.inc({ reason: 'org_rate_limit' });
    }
    throw error;
  }
}
