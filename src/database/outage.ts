// How a background worker lives through a database outage: it backs off between tries, and says so
// once when the outage begins and once when it ends, instead of logging every failed poll.
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from './faults.js';

const FIRST_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 5_000;

/** One worker's view of the database's availability. */
export class OutageTracker {
  private since: number | null = null;
  private failures = 0;

  constructor(
    private readonly logger: Logger,
    /** What is paused, for the log lines ("call progress", "webhook delivery"). */
    private readonly what: string,
  ) {}

  /** Whether the worker is backing off. */
  get inOutage(): boolean {
    return this.since !== null;
  }

  /**
   * Reports a failed step; returns how long to wait before the next try. A database that cannot answer
   * starts (or extends) an outage, logged once; any other error is logged as it comes.
   */
  failed(error: unknown): number {
    if (!isDatabaseUnavailable(error)) {
      this.logger.error({ err: error }, `${this.what} step failed`);
      return FIRST_BACKOFF_MS;
    }
    if (this.since === null) {
      this.since = Date.now();
      this.logger.warn({ err: error }, `${this.what} paused: the database is unavailable; retrying with backoff`);
    }
    this.failures += 1;
    return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.failures - 1));
  }

  /** Reports a step that reached the database; ends an outage (logged once with its length). */
  succeeded(): void {
    if (this.since === null) return;
    this.logger.info({ outageMs: Date.now() - this.since }, `${this.what} resumed: the database answers again`);
    this.since = null;
    this.failures = 0;
  }
}
