// The attempts this process has in flight, by endpoint, so that deleting an endpoint can abort them
// at once instead of waiting for their answers (or their 10-second timeout). A deletion aborts the
// attempts of its own process directly and those of other processes through DELETION_CHANNEL; each
// lock session also looks for deletions of the endpoints it is sending to every second (see
// endpoint-lock.ts), so an attempt is stopped even when a notification is missed.

/** The channel a deletion notifies (immediately, not on commit) with the endpoint's id. */
export const DELETION_CHANNEL = 'webhook_deletions';

/** The abort reason of an attempt stopped because its endpoint is being deleted. */
export class EndpointDeletedError extends Error {
  override readonly name = 'EndpointDeletedError';
  constructor(readonly webhookId: string) {
    super(`webhook endpoint ${webhookId} is being deleted; the attempt was aborted`);
  }
}

/** One registered attempt: aborted when its endpoint is deleted; end() unregisters it. */
export interface InFlightSend {
  readonly signal: AbortSignal;
  /** Aborts this attempt alone with `reason`. */
  abort(reason: unknown): void;
  end(): void;
}

/** Attempts in flight by endpoint id. */
export class SendsInFlight {
  private readonly byEndpoint = new Map<string, Set<AbortController>>();

  /**
   * Registers an attempt to `webhookId`. Register before the last check of the endpoint, so that a
   * deletion that begins after that check finds the attempt here and aborts it.
   */
  begin(webhookId: string): InFlightSend {
    const controller = new AbortController();
    let sends = this.byEndpoint.get(webhookId);
    if (!sends) this.byEndpoint.set(webhookId, (sends = new Set()));
    sends.add(controller);
    return {
      signal: controller.signal,
      abort: (reason) => controller.abort(reason),
      end: () => {
        sends.delete(controller);
        if (sends.size === 0 && this.byEndpoint.get(webhookId) === sends) this.byEndpoint.delete(webhookId);
      },
    };
  }

  /** Aborts every attempt to `webhookId` in flight in this process; returns how many there were. */
  abortEndpoint(webhookId: string): number {
    const sends = [...(this.byEndpoint.get(webhookId) ?? [])];
    for (const controller of sends) controller.abort(new EndpointDeletedError(webhookId));
    return sends.length;
  }
}

/** This process's attempts in flight (the delivery workers' and the test sends'). */
export const sendsInFlight = new SendsInFlight();
