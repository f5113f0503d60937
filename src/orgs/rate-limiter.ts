// Per-org sliding-window rate limit, kept in PostgreSQL so every instance shares it. Each instance
// sends at most one rate_limit_take call per org at a time: the org's requests that arrive while a
// call is out wait and take their slots together in the next call. For a busy org the call also
// reserves slots ahead (about as many as the org used in the last quarter of a second, never more than
// its limit allows in that time), which the next requests take without a round trip; what a reservation
// leaves unused is given back when it lapses. Reserved slots count as if used at the end of their lease,
// so the limit is never exceeded in any 60 s. Orgs under 240 requests a minute never get a reservation.
import type { Clock } from '../clock.js';
import type { Db } from '../database/connect.js';
import { DomainError } from '../errors.js';
import { RATE_LIMIT_RESERVATION_MS } from './policy.js';
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

/** Slots the database counted ahead for this instance. */
interface Reservation {
  left: number;
  /** The window's hits once every reserved slot is used. */
  usedWhenSpent: number;
  /** Until when the slots may be handed out (clock ms). */
  until: number;
  /** When the oldest counted bucket leaves the window (clock ms). */
  resetAt: number;
  /** The bucket the slots were counted in, for giving unused ones back. */
  second: number;
}

/** An org's requests at this instance: those waiting for the next call, its reservation, its recent pace. */
interface OrgWindow {
  /** The window's key in RateLimiter.windows. */
  key: string;
  orgId: string;
  limit: number;
  waiting: Waiter[];
  draining: boolean;
  reservation: Reservation | null;
  /** Requests seen in the current and the previous reservation period. */
  pace: { since: number; current: number; previous: number };
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

/** How many slots an org with this limit may have reserved at once. */
function reservationCap(limit: number): number {
  return Math.floor((limit * RATE_LIMIT_RESERVATION_MS) / 60_000);
}

/** Takes request slots in the orgs' 60-second windows, batching and reserving ahead for busy orgs. */
export class RateLimiter {
  private readonly windows = new Map<string, OrgWindow>();

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
    let window = this.windows.get(key);
    if (!window) {
      window = {
        key,
        orgId,
        limit,
        waiting: [],
        draining: false,
        reservation: null,
        pace: { since: 0, current: 0, previous: 0 },
      };
      this.windows.set(key, window);
    }
    const now = this.clock.now().getTime();
    notePace(window.pace, now);
    const reserved = reservedSlot(window, now);
    if (reserved) return outcome(limit, reserved);
    const slot = new Promise<Slot>((resolve, reject) => window.waiting.push({ resolve, reject }));
    if (!window.draining) void this.drain(window);
    return outcome(limit, await slot);
  }

  /**
   * Sends the window's waiting requests in batches until none is left, giving back what its lapsed
   * reservation left unused with the first call. Requests that come in meanwhile wait for the next call,
   * so this instance's calls for an org reach the database one after the other. Never throws.
   */
  private async drain(window: OrgWindow): Promise<void> {
    window.draining = true;
    do {
      await this.sendBatch(window);
    } while (window.waiting.length > 0);
    window.draining = false;
    if (!window.reservation) this.windows.delete(window.key);
  }

  /** One rate_limit_take call for the waiting requests (or only to give slots back); answers each waiter. Never throws. */
  private async sendBatch(window: OrgWindow): Promise<void> {
    const batch = window.waiting.splice(0);
    const giveBack = unusedSlots(window);
    if (batch.length === 0 && !giveBack) return;
    const now = this.clock.now().getTime();
    try {
      const taken = await takeRateLimitSlots(this.db, {
        orgId: window.orgId,
        limit: window.limit,
        nowMs: now,
        count: batch.length,
        extra:
          batch.length === 0
            ? 0
            : Math.min(reservationCap(window.limit), Math.max(window.pace.current, window.pace.previous)),
        leaseMs: RATE_LIMIT_RESERVATION_MS,
        giveBack,
      });
      const usedByBatch = taken.used - taken.reserved;
      batch.forEach((waiter, i) =>
        waiter.resolve(
          i < taken.granted
            ? { allowed: true, used: usedByBatch - taken.granted + i + 1, resetMs: Number(taken.reset_ms) }
            : { allowed: false, used: taken.used, resetMs: Number(taken.retry_ms) },
        ),
      );
      if (taken.reserved > 0) {
        window.reservation = {
          left: taken.reserved,
          usedWhenSpent: taken.used,
          until: now + RATE_LIMIT_RESERVATION_MS,
          resetAt: now + Number(taken.reset_ms),
          second: Number(taken.counted_second),
        };
        this.giveBackWhenLapsed(window);
        // Requests that came in during the call take the new reservation's slots first.
        const answered = this.clock.now().getTime();
        let slot: Slot | null;
        while (window.waiting.length > 0 && (slot = reservedSlot(window, answered)) !== null) {
          window.waiting.shift()!.resolve(slot);
        }
      }
    } catch (error) {
      // Slots being given back stay counted (only ever too many) when the database cannot be reached.
      for (const waiter of batch) waiter.reject(error);
    }
  }

  /**
   * Once the reservation lapses with nothing being sent for the org, gives back its unused slots through
   * drain, so that a request arriving meanwhile is counted after them, not before. Never throws.
   */
  private giveBackWhenLapsed(window: OrgWindow): void {
    const reservation = window.reservation!;
    const timer = setTimeout(() => {
      if (window.reservation !== reservation || window.draining) return;
      void this.drain(window);
    }, RATE_LIMIT_RESERVATION_MS + 1);
    timer.unref();
  }
}

/** A slot from the window's reservation when it has one left at `now`, or null. */
function reservedSlot(window: OrgWindow, now: number): Slot | null {
  const reservation = window.reservation;
  if (!reservation || reservation.left === 0 || now >= reservation.until) return null;
  reservation.left -= 1;
  return { allowed: true, used: reservation.usedWhenSpent - reservation.left, resetMs: reservation.resetAt - now };
}

/** Ends the window's reservation; returns the slots it left unused, to give back, or null. */
function unusedSlots(window: OrgWindow): { count: number; second: number } | null {
  const reservation = window.reservation;
  window.reservation = null;
  return reservation && reservation.left > 0 ? { count: reservation.left, second: reservation.second } : null;
}

/** Counts a request in the org's pace, starting a new period every RATE_LIMIT_RESERVATION_MS. */
function notePace(pace: OrgWindow['pace'], now: number): void {
  const elapsed = now - pace.since;
  if (elapsed >= RATE_LIMIT_RESERVATION_MS) {
    pace.previous = elapsed < 2 * RATE_LIMIT_RESERVATION_MS ? pace.current : 0;
    pace.current = 0;
    pace.since = now;
  }
  pace.current += 1;
}

/** Removes the rate-limit buckets that no longer count at `nowMs` (orgs that went quiet); returns how many. */
export async function pruneRateLimitBuckets(db: Db, nowMs: number): Promise<number> {
  return deleteLapsedBuckets(db, nowMs);
}
