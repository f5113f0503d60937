// Answers "does the database answer now?" for the readiness probe, on a connection of its own (a pool
// busy with requests must not look like a database that is down), within a tight timeout. A server
// that refuses the probe's connection because it is busy (no connection left for one more client)
// has answered: it is up, and the pool's open connections still work.
import pg from 'pg';
import { withDeadline } from './deadline.js';
import { databaseFault } from './faults.js';

/** How long a cached answer is reused, so a flood of probe requests costs one query. */
const ANSWER_TTL_MS = 500;

/** Checks the database with `SELECT 1` on a dedicated connection; reconnects after a failure. */
export class DatabaseProbe {
  private client: pg.Client | null = null;
  private pending: Promise<boolean> | null = null;
  private last: { ok: boolean; at: number } | null = null;

  constructor(
    private readonly url: string,
    private readonly timeoutMs = 1_500,
  ) {}

  /** Whether the database answered within the timeout (a cached answer at most 0.5 s old). Never throws. */
  async check(): Promise<boolean> {
    if (this.last && performance.now() - this.last.at < ANSWER_TTL_MS) return this.last.ok;
    this.pending ??= this.query().finally(() => (this.pending = null));
    return this.pending;
  }

  /** Closes the probe's connection. */
  async close(): Promise<void> {
    await this.drop();
  }

  private async query(): Promise<boolean> {
    let ok = false;
    try {
      if (!this.client) {
        const client = new pg.Client({
          connectionString: this.url,
          connectionTimeoutMillis: this.timeoutMs,
          keepAlive: true,
        });
        client.on('error', () => undefined);
        this.client = client;
        await client.connect();
      }
      // Our own deadline rather than pg's query_timeout: the unanswered query stays pending, and ending
      // a client with a pending query closes its socket at once instead of saying goodbye to a silent server.
      await withDeadline(this.client.query('SELECT 1'), this.timeoutMs, () => new Error('no answer in time'));
      ok = true;
    } catch (error) {
      ok = databaseFault(error) === 'busy';
      await this.drop();
    }
    this.last = { ok, at: performance.now() };
    return ok;
  }

  private async drop(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    await client.end().catch(() => undefined);
  }
}
