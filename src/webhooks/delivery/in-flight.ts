// "DELETE is final": once DELETE /webhooks/{id} has answered, no request to the endpoint starts. This is
// the protocol's one home:
//
//  1. A send needs a claim: a lease on its delivery row (an owner and an expiry past the send timeout),
//     taken by a statement that share-locks the endpoint row and skips an endpoint marked deleted
//     (delivery-queries.ts: claimDeliveries, insertClaimedTestDelivery). Every send ends before its
//     lease does.
//  2. The deletion locks the endpoint row, which waits for claims in progress, marks it deleted and
//     switched off, and commits: from then on no claim succeeds. It touches no delivery row under that
//     lock (a claim holds its delivery rows while it waits for the endpoint row: that would deadlock).
//  3. It stops the sends in flight to the endpoint: in this process through the registry below, in the
//     others through a notification (DELETION_CHANNEL) that their listeners pass to theirs; a process
//     that missed it finds the mark itself within a second (the registry's watch). A stopped send
//     records nothing and gives its lease back.
//  4. It waits until none of the endpoint's deliveries is out on lease (a lease of a process that died
//     lapses by itself, so the wait is bounded by the lease length), then removes the endpoint.
//
// No database connection is held during a send: the lease is the record of it.
//
// Switching an endpoint off follows the same steps (the claim checks `active` as it checks the mark),
// with its own notification (SWITCH_OFF_CHANNEL); a test send, which may go to a switched-off endpoint,
// is the one send a switch-off does not stop. A send stopped after its request left may still reach the
// receiver, before the answer; nothing is recorded, and the delivery is dropped with the others.
import type { Db } from '../../database/connect.js';
import type { Clock } from '../../clock.js';
import { hasLeasesOut } from '../delivery-queries.js';

/** The abort reason of a send stopped because its endpoint is being deleted. */
export class EndpointDeletedError extends Error {
  override readonly name = 'EndpointDeletedError';
  constructor(readonly webhookId: string) {
    super(`webhook endpoint ${webhookId} is being deleted; the attempt was aborted`);
  }
}

/** The abort reason of a send stopped because its endpoint was switched off. */
export class EndpointSwitchedOffError extends Error {
  override readonly name = 'EndpointSwitchedOffError';
  constructor(readonly webhookId: string) {
    super(`webhook endpoint ${webhookId} was switched off; the attempt was aborted`);
  }
}

/** One send registered in flight; end() unregisters it and frees its timer at once. */
export interface InFlightSend {
  /** Aborts when the endpoint is deleted, when the caller's `stop` fires, or at the deadline. */
  readonly signal: AbortSignal;
  /** Whether the send was stopped (its endpoint's deletion or switch-off, or `stop`) rather than timed out. */
  readonly stopped: boolean;
  end(): void;
}

/** How long a tracked send may last, and what else stops it. */
export interface SendLimits {
  deadlineMs: number;
  stop?: AbortSignal;
  /** A send a switch-off of its endpoint does not stop (a test send). */
  survivesSwitchOff?: boolean;
}

function isTimeout(reason: unknown): boolean {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}

/** Of the endpoints `ids`, those whose deletion has begun (or that are gone), and those switched off. */
export type FindStopped = (ids: string[]) => Promise<{ deleted: string[]; switchedOff: string[] }>;

/** Why an endpoint's sends are stopped. */
export type StopReason = 'deleted' | 'switched_off';

/**
 * The sends this process has in flight, by endpoint, so a deletion or switch-off can stop them at once.
 * While any is in flight it also looks every `watchMs` for deletions and switch-offs it was not told about.
 */
export class InFlightSends {
  private readonly byEndpoint = new Map<string, Map<AbortController, SendLimits>>();
  private timer: NodeJS.Timeout | null = null;
  private watching = false;

  constructor(
    private readonly findStopped: FindStopped,
    private readonly onWatchError: (error: unknown) => void,
    private readonly watchMs = 1_000,
  ) {}

  /**
   * Registers a send to `webhookId`; call end() once it is over. The send's one signal carries its
   * deadline and `stop` too. AbortSignal.timeout and AbortSignal.any would keep each attempt's signals
   * and timers alive for the whole deadline after the attempt ended (docs/benchmarks.md, 2026-11-28);
   * here end() clears the timer and the listener.
   */
  track(webhookId: string, limits: SendLimits): InFlightSend {
    const controller = new AbortController();
    const deadline = setTimeout(
      () => controller.abort(new DOMException('the send took longer than its deadline', 'TimeoutError')),
      limits.deadlineMs,
    );
    const { stop } = limits;
    const onStop = () => controller.abort(stop?.reason);
    if (stop?.aborted) onStop();
    else stop?.addEventListener('abort', onStop, { once: true });
    let sends = this.byEndpoint.get(webhookId);
    if (!sends) this.byEndpoint.set(webhookId, (sends = new Map<AbortController, SendLimits>()));
    sends.set(controller, limits);
    if (!this.timer) {
      this.timer = setInterval(() => void this.watch(), this.watchMs);
      this.timer.unref();
    }
    return {
      signal: controller.signal,
      get stopped() {
        return controller.signal.aborted && !isTimeout(controller.signal.reason);
      },
      end: () => {
        clearTimeout(deadline);
        stop?.removeEventListener('abort', onStop);
        sends.delete(controller);
        if (sends.size === 0 && this.byEndpoint.get(webhookId) === sends) this.byEndpoint.delete(webhookId);
        if (this.byEndpoint.size === 0 && this.timer) {
          clearInterval(this.timer);
          this.timer = null;
        }
      },
    };
  }

  /**
   * Aborts the sends to `webhookId` in flight in this process (for a switch-off, all but those that
   * survive it); returns how many were aborted.
   */
  abortEndpoint(webhookId: string, why: StopReason = 'deleted'): number {
    const sends = [...(this.byEndpoint.get(webhookId) ?? [])].filter(
      ([, limits]) => why === 'deleted' || !limits.survivesSwitchOff,
    );
    for (const [controller] of sends) {
      controller.abort(
        why === 'deleted' ? new EndpointDeletedError(webhookId) : new EndpointSwitchedOffError(webhookId),
      );
    }
    return sends.length;
  }

  private async watch(): Promise<void> {
    if (this.watching || this.byEndpoint.size === 0) return;
    this.watching = true;
    try {
      const { deleted, switchedOff } = await this.findStopped([...this.byEndpoint.keys()]);
      for (const id of deleted) this.abortEndpoint(id, 'deleted');
      for (const id of switchedOff) this.abortEndpoint(id, 'switched_off');
    } catch (error) {
      this.onWatchError(error);
    } finally {
      this.watching = false;
    }
  }
}

/**
 * Step 4: resolves once no delivery to the endpoint is out on lease, looking every `pollMs`, or after
 * `boundMs` (the lease length: by then every lease has lapsed). Database errors propagate.
 */
export async function waitForSendsToEnd(
  db: Db,
  clock: Clock,
  webhookId: string,
  options: { boundMs: number; pollMs: number },
): Promise<void> {
  const started = performance.now();
  while (await hasLeasesOut(db, webhookId, clock.now())) {
    if (performance.now() - started >= options.boundMs) return;
    await new Promise((resolve) => setTimeout(resolve, options.pollMs));
  }
}
