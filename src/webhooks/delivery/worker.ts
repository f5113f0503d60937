// The delivery worker: claims due deliveries from the PostgreSQL queue (lease + SKIP LOCKED), sends
// them in parallel under a per-endpoint and a global cap, and records each attempt. Woken at once by
// LISTEN/NOTIFY, and by a periodic sweep for retries that fall due and leases that expired.
import type { Agent } from 'undici';
import type { AppDeps } from '../../app-deps.js';
import type { BackgroundWorker } from '../../background-worker.js';
import { findDueDeliveries, leaseDeliveries, type LeasedDelivery } from '../delivery-queries.js';
import { parseAllowlist } from './address-policy.js';
import { performAttempt, type AttemptResult } from './attempt.js';
import { EndpointLockSession } from './endpoint-lock.js';
import { createGuardedAgent } from './guarded-agent.js';
import { listenForDeliveries, type DeliveryListener } from './notifications.js';
import { abandonLeasedDelivery, LeaseLostError, recordLeasedAttempt } from './outcome.js';
import { sendsInFlight } from './sends-in-flight.js';

/** Tuning of a delivery worker; every field but listenUrl has a default. */
export interface DeliveryWorkerOptions {
  /** PostgreSQL URL for the LISTEN connection; null relies on the sweep alone. */
  listenUrl: string | null;
  /** Attempts in flight to one endpoint from this process. */
  perEndpointConcurrency: number;
  /** Attempts in flight from this process in all. */
  globalConcurrency: number;
  /** How often due retries and expired leases are looked for. */
  sweepIntervalMs: number;
  /** How long a claim lasts; a claim whose worker died is taken over after it. Must exceed the 10 s send timeout. */
  leaseMs: number;
}

const DEFAULTS: Omit<DeliveryWorkerOptions, 'listenUrl'> = {
  perEndpointConcurrency: 4,
  // Attempts are network waits, cheap to hold; the cap must stay far above what hanging endpoints can
  // take (4 each, up to 10 s): with 32, eight of them starved every other endpoint.
  globalConcurrency: 256,
  sweepIntervalMs: 1_000,
  leaseMs: 60_000,
};

/** Delivers webhook events; several workers (in several processes) may share one database. */
export class DeliveryWorker implements BackgroundWorker {
  private readonly options: DeliveryWorkerOptions;
  private readonly agent: Agent;
  private readonly perEndpoint = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private session: EndpointLockSession | null = null;
  private fillChain: Promise<unknown> = Promise.resolve();
  private queuedFill: Promise<number> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private listener: DeliveryListener | null = null;
  private stopped = false;

  constructor(
    private readonly deps: AppDeps,
    options: Partial<DeliveryWorkerOptions> & Pick<DeliveryWorkerOptions, 'listenUrl'>,
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.agent = createGuardedAgent({
      allowlist: parseAllowlist(deps.config.webhookPrivateAllowlist),
      caCerts: deps.config.webhookCaCerts,
    });
  }

  /** Starts listening for new deliveries and sweeping for due ones. */
  start(): void {
    if (this.options.listenUrl) {
      this.listener = listenForDeliveries(
        this.options.listenUrl,
        {
          onDelivery: () => this.wake(),
          // Another process is deleting the endpoint: stop sending to it now (see sends-in-flight.ts).
          onDeletion: (webhookId) => sendsInFlight.abortEndpoint(webhookId),
        },
        this.deps.logger,
      );
    }
    this.timer = setInterval(() => this.wake(), this.options.sweepIntervalMs);
    this.timer.unref();
    this.wake();
  }

  /**
   * One deterministic sweep: claims what is due now (by the clock in deps) and resolves once every
   * attempt in flight has been recorded. Returns how many deliveries this sweep claimed.
   */
  async runOnce(): Promise<number> {
    const claimed = await this.fill();
    for (;;) {
      await this.fillChain;
      if (this.running.size === 0) return claimed;
      await Promise.allSettled([...this.running]);
    }
  }

  /**
   * Stops claiming, lets attempts in flight finish for up to `timeoutMs`, then abandons the rest
   * unrecorded: their leases expire and another worker sends them again (at-least-once).
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.listener?.close();
    await this.fillChain;
    const settled = Promise.allSettled([...this.running]);
    let deadline: NodeJS.Timeout | undefined;
    await Promise.race([settled, new Promise((resolve) => (deadline = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(deadline);
    await this.session?.close().catch(() => undefined);
    await Promise.allSettled([...this.running]);
    await this.agent.destroy();
  }

  private wake(): void {
    if (this.stopped) return;
    this.fill().catch((error: unknown) => this.deps.logger.error({ err: error }, 'webhook delivery sweep failed'));
  }

  /** Queues one claim pass after the current one; passes requested meanwhile share it. */
  private fill(): Promise<number> {
    if (this.queuedFill) return this.queuedFill;
    const pass = this.fillChain.then(() => {
      this.queuedFill = null;
      return this.claimAndLaunch();
    });
    this.queuedFill = pass;
    this.fillChain = pass.catch(() => undefined);
    return pass;
  }

  private async claimAndLaunch(): Promise<number> {
    const free = this.options.globalConcurrency - this.running.size;
    if (this.stopped || free <= 0) return 0;
    const cap = this.options.perEndpointConcurrency;
    const now = this.deps.clock.now();
    const busy = [...this.perEndpoint].filter(([, count]) => count >= cap).map(([id]) => id);
    const candidates = await findDueDeliveries(this.deps.db, now, {
      perEndpoint: cap,
      limit: free * 2,
      skipEndpoints: busy,
    });
    const planned = new Map(this.perEndpoint);
    const picked: string[] = [];
    for (const candidate of candidates) {
      const count = planned.get(candidate.webhook_id) ?? 0;
      if (count >= cap || picked.length >= free) continue;
      planned.set(candidate.webhook_id, count + 1);
      picked.push(candidate.id);
    }
    if (picked.length === 0) return 0;
    const session = await this.lockSession();
    const leased = await leaseDeliveries(this.deps.db, picked, now, new Date(now.getTime() + this.options.leaseMs));
    for (const delivery of leased) this.launch(session, delivery);
    return leased.length;
  }

  private async lockSession(): Promise<EndpointLockSession> {
    if (this.session?.usable) return this.session;
    await this.session?.close().catch(() => undefined);
    this.session = await EndpointLockSession.open(this.deps.db, (error) => {
      this.deps.logger.error({ err: error }, 'webhook lock session lost; aborting attempts in flight');
    });
    return this.session;
  }

  private launch(session: EndpointLockSession, delivery: LeasedDelivery): void {
    const endpoint = delivery.webhookId;
    this.perEndpoint.set(endpoint, (this.perEndpoint.get(endpoint) ?? 0) + 1);
    const run: Promise<void> = this.deliver(session, delivery)
      .catch((error: unknown) => {
        if (error instanceof LeaseLostError) this.deps.logger.warn({ deliveryId: delivery.id }, error.message);
        else this.deps.logger.error({ err: error, deliveryId: delivery.id }, 'webhook delivery failed to run');
      })
      .finally(() => {
        const left = (this.perEndpoint.get(endpoint) ?? 1) - 1;
        if (left > 0) this.perEndpoint.set(endpoint, left);
        else this.perEndpoint.delete(endpoint);
        this.running.delete(run);
        this.wake();
      });
    this.running.add(run);
  }

  private async deliver(session: EndpointLockSession, delivery: LeasedDelivery): Promise<void> {
    const entered = await session.enter(delivery.webhookId, this.deps.clock.now());
    // Gone or being deleted: its deliveries go with it (or the lease expires if the deletion fails).
    if (!entered) return;
    let result: AttemptResult;
    try {
      if (!entered.target.active) {
        await abandonLeasedDelivery(this.deps.db, delivery);
        return;
      }
      const context = { dispatcher: this.agent, clock: this.deps.clock, logger: this.deps.logger };
      result = await performAttempt(context, entered.target, delivery.event, entered.signal);
    } finally {
      // The attempt is over: a deletion waiting for it may go ahead (recording needs no lock).
      await entered.leave();
    }
    // Aborted mid-send (the endpoint is being deleted, or this worker stopped or lost its lock
    // session): record nothing; the lease expires and the delivery is retried if it still exists.
    if (entered.signal.aborted) return;
    await recordLeasedAttempt(this.deps.db, delivery, result, this.deps.logger);
  }
}

/**
 * Creates and starts the delivery worker for the app; LISTENs on the app's database
 * (`config.databaseUrl`, which main.ts sets to the database it opened).
 */
export function startDeliveryWorker(deps: AppDeps, options: Partial<DeliveryWorkerOptions> = {}): DeliveryWorker {
  const listenUrl = deps.config.databaseUrl;
  if (!listenUrl) {
    throw new Error(
      'startDeliveryWorker needs config.databaseUrl, the URL of the database the app uses (its LISTEN connection goes there)',
    );
  }
  const worker = new DeliveryWorker(deps, { listenUrl, ...options });
  worker.start();
  return worker;
}
