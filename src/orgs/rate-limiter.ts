// Per-org sliding-window rate limit, kept in PostgreSQL so every instance shares it. Each instance
// sends at most one rate_limit_take call per org at a time: the org's requests that arrive while a
// call is out wait and take their slots together in the next call, so a busy org costs one database
// round trip per batch instead of one per request, with the same answers as one call per request.
import type { Clock } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { DomainError } from '../errors.js';
import { deleteLapsedBuckets, takeRateLimitSlots } from './rate-limit-queries.js';

/** What a granted request sends back: its X-RateLimit-* headers. */
export interface RateLimitOutcome {
  headers: Record<string, string>;
}

/** One request's share of a batch: whether it fits, the hits counted with it, and the ms to report. */
interface Slot {
  allowed: boolean;
  used: number;
  resetMs: number;
}

interface Waiter {
  resolve(slot: Slot): void;
  reject(error: unknown): void;
}

interface Queue {
  orgId: string;
  limit: number;
  waiting: Waiter[];
}

function outcome(limit: number, slot: Slot): RateLimitOutcome {
  const resetSeconds = Math.max(1, Math.ceil(slot.resetMs / 1000));
  const headers = {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(Math.max(0, limit - slot.used)),
    'X-RateLimit-Reset': String(resetSeconds),
  };
  if (!slot.allowed) {
    throw new DomainError(
      'too_many_requests',
      `Rate limit of ${limit} requests per minute exceeded; retry in ${resetSeconds} seconds.`,
      { headers: { ...headers, 'Retry-After': String(resetSeconds) } },
    );
  }
  return { headers };
}

/** Takes request slots in the orgs' 60-second windows, batching concurrent requests of one org. */
export class RateLimiter {
  /** Orgs with a call out, by org and limit; requests queue here until the next call. */
  private readonly queues = new Map<string, Queue>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /**
   * Takes one request slot for the org. Returns the X-RateLimit-* headers to send; throws DomainError
   * too_many_requests (with Retry-After) when the window is full. Database errors propagate.
   */
  async take(orgId: string, limit: number): Promise<RateLimitOutcome> {
    const key = `${orgId}/${limit}`;
    const idle = !this.queues.has(key);
    if (idle) this.queues.set(key, { orgId, limit, waiting: [] });
    const queue = this.queues.get(key)!;
    const slot = new Promise<Slot>((resolve, reject) => queue.waiting.push({ resolve, reject }));
    if (idle) void this.drain(key, queue);
    return outcome(limit, await slot);
  }

  /** Sends the queue's requests in batches until none is left waiting. Never throws. */
  private async drain(key: string, queue: Queue): Promise<void> {
    while (queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0);
      try {
        const {
          granted,
          used,
          reset_ms: resetMs,
          retry_ms: retryMs,
        } = await takeRateLimitSlots(this.db, {
          orgId: queue.orgId,
          limit: queue.limit,
          nowMs: this.clock.now().getTime(),
          count: batch.length,
        });
        batch.forEach((waiter, i) =>
          waiter.resolve(
            i < granted
              ? { allowed: true, used: used - granted + i + 1, resetMs: Number(resetMs) }
              : { allowed: false, used, resetMs: Number(retryMs) },
          ),
        );
      } catch (error) {
        for (const waiter of batch) waiter.reject(error);
      }
    }
    this.queues.delete(key);
  }
}

/** Removes the rate-limit buckets that no longer count at `nowMs` (orgs that went quiet); returns how many. */
export async function pruneRateLimitBuckets(db: Db, nowMs: number): Promise<number> {
  return deleteLapsedBuckets(db, nowMs);
}
