// A pinned database session that holds the send locks of the attempts in flight (see
// repositories/webhook-locks.ts), so DELETE waits for them and nothing is sent after it returns.
import type { Db } from '../database/connect.js';
import * as locks from '../repositories/webhook-locks.js';
import type { AttemptTarget } from './attempt.js';

/** An endpoint entered for sending: where to send, with which secrets, and whether it is active. */
export interface SendTarget extends AttemptTarget {
  active: boolean;
}

/** Holds send locks on one pinned connection; if the session is lost, `signal` aborts its sends. */
export class EndpointLockSession {
  private readonly controller = new AbortController();
  private closed = false;

  private constructor(
    private readonly conn: Db,
    private readonly release: () => void,
    private readonly pinned: Promise<void>,
  ) {}

  /** Pins a pool connection for the session; throws when none can be had. */
  static async open(db: Db): Promise<EndpointLockSession> {
    return new Promise((resolve, reject) => {
      const pinned: Promise<void> = db
        .connection()
        .execute((conn) => new Promise<void>((release) => resolve(new EndpointLockSession(conn, release, pinned))));
      pinned.catch(reject);
    });
  }

  /** Aborted when the session is closed or lost: sends relying on it must stop. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the session can still take locks. */
  get usable(): boolean {
    return !this.closed && !this.controller.signal.aborted;
  }

  /**
   * Enters an endpoint for one send, holding its send lock until leave(). Null (nothing held) when the
   * endpoint is gone or being deleted. Database errors mark the session lost and propagate.
   */
  async enter(webhookId: string, now: Date): Promise<SendTarget | null> {
    const row = await this.guard(async () => {
      if (!(await locks.tryLockForSending(this.conn, webhookId))) return undefined;
      const found = await locks.readSendTarget(this.conn, webhookId);
      if (!found) await locks.unlockForSending(this.conn, webhookId);
      return found;
    });
    if (!row) return null;
    const graceOpen = row.previous_secret !== null && row.previous_secret_expires_at !== null && row.previous_secret_expires_at > now;
    return { url: row.url, secrets: graceOpen ? [row.secret, row.previous_secret!] : [row.secret], active: row.active };
  }

  /** Leaves an endpoint entered with enter(). A no-op once the session is closed or lost. */
  async leave(webhookId: string): Promise<void> {
    if (!this.usable) return;
    await this.guard(() => locks.unlockForSending(this.conn, webhookId));
  }

  /** Checks the session is alive; marks it lost (aborting its sends) and throws when it is not. */
  async ping(): Promise<void> {
    await this.guard(() => locks.pingSession(this.conn));
  }

  /** Aborts what still relies on the session, releases every lock and unpins the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.controller.abort();
    try {
      // Even after an error: the connection goes back to the pool and must not keep any lock.
      await locks.unlockAll(this.conn);
    } catch {
      // A dead connection holds no locks: the server released them with the session.
    } finally {
      this.release();
      await this.pinned.catch(() => undefined);
    }
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    if (!this.usable) throw new Error('the endpoint lock session is closed');
    try {
      return await work();
    } catch (error) {
      this.controller.abort();
      throw error;
    }
  }
}
