// Whether this process should receive traffic: not while it drains for a shutdown, nor while its
// database does not answer. Read by GET /readyz.
import { DatabaseProbe } from '../database/probe.js';

/** Why the process is not ready, or null when it is. */
export type NotReadyReason = 'draining' | 'database_unavailable' | null;

/** The process's readiness: a draining flag set at shutdown and a live database probe. */
export class Readiness {
  private drainingSince: number | null = null;

  constructor(private readonly probe: DatabaseProbe | null) {}

  /** Marks the process as shutting down: from now on it reports itself not ready. */
  startDraining(): void {
    this.drainingSince ??= Date.now();
  }

  /** Whether startDraining was called. */
  get draining(): boolean {
    return this.drainingSince !== null;
  }

  /** Why the process should not get traffic now, or null. Never throws. */
  async notReadyReason(): Promise<NotReadyReason> {
    if (this.draining) return 'draining';
    if (this.probe && !(await this.probe.check())) return 'database_unavailable';
    return null;
  }

  /** Closes the probe's connection. */
  async close(): Promise<void> {
    await this.probe?.close();
  }
}

/** The readiness of a process using the database at `databaseUrl` (no probe without one). */
export function createReadiness(databaseUrl: string | null): Readiness {
  return new Readiness(databaseUrl ? new DatabaseProbe(databaseUrl) : null);
}
