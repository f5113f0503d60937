// Whether this process should receive traffic: not while it drains for a shutdown, nor while its
// database does not answer. Once a request finds the database unavailable, API requests are refused at
// once (no request waits on a database known to be down) and a probe looks every second until it
// answers again; the outage is logged once when it begins and once when it ends.
import type { Logger } from 'pino';
import { DatabaseProbe } from '../database/probe.js';

/** Why the process is not ready, or null when it is. */
export type NotReadyReason = 'draining' | 'database_unavailable' | null;

/**
 * What /readyz answers (on the API port and the metrics port alike) for why the process is not ready:
 * null is ready; any other reason (this process's, or a supervisor's such as `no_http_process`) is a
 * 503 naming it, asking the prober to look again in a second.
 */
export function readinessAnswer(reason: string | null): {
  status: 200 | 503;
  headers: Record<string, string>;
  body: { status: 'ready' | 'draining' | 'unavailable'; database?: 'ok' | 'unreachable'; reason?: string };
} {
  if (reason === null) return { status: 200, headers: {}, body: { status: 'ready', database: 'ok' } };
  const headers = { 'Retry-After': '1' };
  if (reason === 'draining') return { status: 503, headers, body: { status: 'draining', reason } };
  if (reason === 'database_unavailable') {
    return { status: 503, headers, body: { status: 'unavailable', database: 'unreachable', reason } };
  }
  return { status: 503, headers, body: { status: 'unavailable', reason } };
}

/** How often a database known to be down is probed. */
const PROBE_EVERY_MS = 1_000;

/** The process's readiness: a draining flag set at shutdown and the database's availability. */
export class Readiness {
  private drainingSince: number | null = null;
  private downSince: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Whether a probe started while the database was down is still waiting for its answer. */
  private probing = false;

  constructor(
    private readonly probe: DatabaseProbe | null,
    private readonly logger: Logger,
  ) {}

  /** Marks the process as shutting down: from now on it reports itself not ready. */
  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  /** Whether startDraining was called. */
  get draining(): boolean {
    return this.drainingSince !== null;
  }

  /** Whether the database is known to be down (until a probe finds it answering). */
  get databaseDown(): boolean {
    return this.downSince !== null;
  }

  /** Reports that the database could not be reached or did not answer in time. Never throws. */
  noteDatabaseFailure(): void {
    if (this.downSince !== null || !this.probe) return;
    this.downSince = Date.now();
    this.logger.warn('database unavailable: work that needs it is refused or waits until it answers again');
    this.timer = setInterval(() => void this.probeWhileDown(), PROBE_EVERY_MS);
    this.timer.unref();
  }

  /** Why the process should not get traffic now, or null. Never throws. */
  async notReadyReason(): Promise<NotReadyReason> {
    if (this.draining) return 'draining';
    if (this.databaseDown) return 'database_unavailable';
    if (this.probe && !(await this.probe.check())) {
      this.noteDatabaseFailure();
      return 'database_unavailable';
    }
    return null;
  }

  /** Stops probing and closes the probe's connection. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.probe?.close();
  }

  private async probeWhileDown(): Promise<void> {
    // One probe at a time: on a slow machine a check can outlast the interval, and two checks that both
    // succeed would report the recovery twice.
    if (this.downSince === null || !this.probe || this.probing) return;
    this.probing = true;
    let answered: boolean;
    try {
      answered = await this.probe.check();
    } finally {
      this.probing = false;
    }
    if (!answered || this.downSince === null) return;
    this.logger.info({ outageMs: Date.now() - this.downSince }, 'database available again');
    this.downSince = null;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/** The readiness of a process using the database at `databaseUrl` (no probe without one). */
export function createReadiness(databaseUrl: string | null, logger: Logger): Readiness {
  return new Readiness(databaseUrl ? new DatabaseProbe(databaseUrl) : null, logger);
}
