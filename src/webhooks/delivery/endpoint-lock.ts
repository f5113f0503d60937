// A pinned database session that holds the send locks of the attempts in flight (see
// repositories/webhook-locks.ts), so a DELETE can tell when none is running and none can start. Each
// entered endpoint comes with an AbortSignal: a deletion of the endpoint aborts it (directly in this
// process, by notification from others, and in any case within WATCH_INTERVAL_MS, when the session
// looks for deletions of the endpoints it is sending to), and so does the loss of the session.
import type { Db } from '../../database/connect.js';
import * as locks from './lock-queries.js';
import type { AttemptTarget } from './attempt.js';
import { EndpointDeletedError, sendsInFlight, type InFlightSend } from './sends-in-flight.js';

/** How often a session looks for deletions of the endpoints it is sending to (and checks it is alive). */
const WATCH_INTERVAL_MS = 1_000;

/** An endpoint entered for sending: where to send, with which secrets, and whether it is active. */
export interface SendTarget extends AttemptTarget {
  active: boolean;
}

/** An endpoint entered for one attempt, holding its send lock until leave(). */
export interface EnteredEndpoint {
  target: SendTarget;
  /** Aborted when the endpoint is being deleted, or the session is closed or lost: stop sending. */
  signal: AbortSignal;
  /** Whether the attempt was aborted because the endpoint is being deleted. */
  readonly deleted: boolean;
  /** Releases the send lock; call once the attempt has ended (or was aborted). Idempotent. */
  leave(): Promise<void>;
}

/** Holds send locks on one pinned connection; if the session is lost, `signal` aborts its sends. */
export class EndpointLockSession {
  private readonly controller = new AbortController();
  private readonly entered = new Map<InFlightSend, string>();
  /** Send locks this session holds, by endpoint: how many attempts share each, and whether it was had. */
  private readonly holds = new Map<string, { users: number; locked: Promise<boolean> }>();
  private readonly watchTimer: NodeJS.Timeout;
  private watching = false;
  private closed = false;

  private constructor(
    private readonly db: Db,
    private readonly conn: Db,
    private readonly unpin: () => void,
    private readonly pinned: Promise<void>,
    private readonly onLost: (error: unknown) => void,
  ) {
    this.watchTimer = setInterval(() => void this.watch(), WATCH_INTERVAL_MS);
    this.watchTimer.unref();
  }

  /**
   * Pins a pool connection for the session; throws when none can be had. `onLost` hears about the
   * error that lost the session while it watched (the attempts relying on it are aborted).
   */
  static async open(db: Db, onLost: (error: unknown) => void = () => undefined): Promise<EndpointLockSession> {
    return new Promise((resolve, reject) => {
      const pinned: Promise<void> = db
        .connection()
        .execute(
          (conn) => new Promise<void>((release) => resolve(new EndpointLockSession(db, conn, release, pinned, onLost))),
        );
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
   * Enters an endpoint for one attempt, holding its send lock until leave(). Null (nothing held) when
   * the endpoint is gone or being deleted. Database errors on the session mark it lost and propagate.
   */
  async enter(webhookId: string, now: Date): Promise<EnteredEndpoint | null> {
    // Registered before the check: a deletion that begins after it finds this attempt and aborts it.
    const send = sendsInFlight.begin(webhookId);
    let row: locks.SendTargetRow | undefined;
    let holding = false;
    try {
      const hold = await this.acquire(webhookId);
      holding = hold !== 'refused';
      // The send lock is held, so a deletion that has not begun waits for us. The attempt that took the
      // lock reads on the session's own connection (a session never needs a second one); attempts
      // sharing a lock already held read through the pool, leaving the session free.
      if (holding)
        row = await (hold === 'taken'
          ? this.guard(() => locks.readSendTarget(this.conn, webhookId))
          : locks.readSendTarget(this.db, webhookId));
    } finally {
      if (!row) {
        send.end();
        if (holding) await this.releaseQuietly(webhookId);
      }
    }
    if (!row) return null;
    this.entered.set(send, webhookId);
    const graceOpen =
      row.previous_secret !== null && row.previous_secret_expires_at !== null && row.previous_secret_expires_at > now;
    let left = false;
    return {
      target: {
        url: row.url,
        secrets: graceOpen ? [row.secret, row.previous_secret!] : [row.secret],
        active: row.active,
      },
      signal: AbortSignal.any([this.controller.signal, send.signal]),
      get deleted() {
        return send.signal.reason instanceof EndpointDeletedError;
      },
      leave: async () => {
        if (left) return;
        left = true;
        this.entered.delete(send);
        send.end();
        await this.release(webhookId);
      },
    };
  }

  /**
   * Takes the endpoint's send lock for one more attempt. The session takes it from PostgreSQL only for
   * the first attempt in flight to the endpoint ('taken'); later ones share it ('shared'), so a busy
   * endpoint costs no lock round trips. 'refused' (nothing held) when a deletion holds the lock.
   * Throws when the session is closed or lost.
   */
  private async acquire(webhookId: string): Promise<'taken' | 'shared' | 'refused'> {
    if (!this.usable) throw new Error('the endpoint lock session is closed');
    let hold = this.holds.get(webhookId);
    const taking = !hold;
    if (!hold) {
      hold = { users: 0, locked: this.guard(() => locks.tryLockForSending(this.conn, webhookId)) };
      hold.locked.catch(() => undefined);
      this.holds.set(webhookId, hold);
    }
    hold.users += 1;
    let locked = false;
    try {
      locked = await hold.locked;
    } finally {
      if (!locked) await this.releaseQuietly(webhookId);
    }
    return !locked ? 'refused' : taking ? 'taken' : 'shared';
  }

  /** Gives back one attempt's share of the send lock; the last one out unlocks it in PostgreSQL. */
  private async release(webhookId: string): Promise<void> {
    const hold = this.holds.get(webhookId);
    if (!hold) return;
    hold.users -= 1;
    if (hold.users > 0) return;
    this.holds.delete(webhookId);
    const locked = await hold.locked.catch(() => false);
    // A closed or lost session holds no locks any more.
    if (locked && this.usable) await this.guard(() => locks.unlockForSending(this.conn, webhookId));
  }

  private async releaseQuietly(webhookId: string): Promise<void> {
    await this.release(webhookId).catch(() => undefined);
  }

  /** Aborts what still relies on the session, releases every lock and unpins the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.watchTimer);
    this.controller.abort();
    try {
      // Even after an error: the connection goes back to the pool and must not keep any lock.
      await locks.unlockAll(this.conn);
    } catch {
      // A dead connection holds no locks: the server released them with the session.
    } finally {
      this.unpin();
      await this.pinned.catch(() => undefined);
    }
  }

  /** Aborts the attempts to endpoints being deleted; proves the session alive (marks it lost otherwise). */
  private async watch(): Promise<void> {
    if (this.watching || !this.usable) return;
    this.watching = true;
    try {
      const deleting = new Set(
        await this.guard(() => locks.deletionsPending(this.conn, [...new Set(this.entered.values())])),
      );
      for (const [send, webhookId] of this.entered) {
        if (deleting.has(webhookId)) send.abort(new EndpointDeletedError(webhookId));
      }
    } catch (error) {
      if (!this.closed) this.onLost(error);
    } finally {
      this.watching = false;
    }
  }

  private async guard<T>(work: () => Promise<T>): Promise<T> {
    if (!this.usable) throw new Error('the endpoint lock session is closed');
    try {
      return await work();
    } catch (error) {
      this.controller.abort(error);
      throw error;
    }
  }
}
