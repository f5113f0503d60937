// The delivery worker: claims due deliveries from the PostgreSQL queue (a lease, FOR UPDATE SKIP
// LOCKED) and runs deliverOnce on each, in parallel under a per-endpoint, a per-org and a per-process
// cap, taking orgs in turns. Woken at once by LISTEN/NOTIFY, and by a periodic sweep for retries that
// fall due and leases that lapsed; backs off while the database is unavailable.
import type { AppDeps } from '../../app-deps.js';
import type { BackgroundWorker } from '../../background-worker.js';
import { claimDeliveries, findDueDeliveries, type ClaimedDelivery } from '../delivery-queries.js';
import { OutageTracker } from '../../database/outage.js';
import { deliverOnce } from './deliver-once.js';
import { listenForDeliveries, type DeliveryListener } from './notifications.js';

/** Tuning of a delivery worker; every field but listenUrl has a default. */
export interface DeliveryWorkerOptions {
  /** PostgreSQL URL for the LISTEN connection; null relies on the sweep alone. */
  listenUrl: string | null;
  /** Attempts in flight to one endpoint from this process. */
  perEndpointConcurrency: number;
  /** Attempts in flight for one org from this process. */
  perOrgConcurrency: number;
  /** Attempts in flight from this process in all. */
  globalConcurrency: number;
  /** How often due retries and lapsed leases are looked for. */
  sweepIntervalMs: number;
}

/** Claim passes run at once in a row after picks were lost to other processes. */
const MAX_PASSES_AFTER_LOST_RACES = 3;

/** Delivers webhook events; several workers (in several processes) may share one database. */
export class DeliveryWorker implements BackgroundWorker {
  private readonly options: DeliveryWorkerOptions;
  private readonly perEndpoint = new Map<string, number>();
  private readonly perOrg = new Map<string, number>();
  private readonly outage: OutageTracker;
  private pausedUntil = 0;
  private readonly running = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private fillChain: Promise<unknown> = Promise.resolve();
  private queuedFill: Promise<number> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private listener: DeliveryListener | null = null;
  private passesAfterLostRaces = 0;

  constructor(
    private readonly deps: AppDeps,
    options: Partial<DeliveryWorkerOptions> & Pick<DeliveryWorkerOptions, 'listenUrl'>,
  ) {
    const { config } = deps;
    this.options = {
      perEndpointConcurrency: config.webhookConcurrencyPerEndpoint,
      perOrgConcurrency: config.webhookConcurrencyPerOrg,
      globalConcurrency: config.webhookConcurrency,
      sweepIntervalMs: config.webhookSweepIntervalMs,
      ...options,
    };
    this.outage = new OutageTracker(deps.logger, 'webhook delivery');
  }

  /** Starts listening for new deliveries and sweeping for due ones. */
  start(): void {
    if (this.options.listenUrl) {
      this.listener = listenForDeliveries(
        this.options.listenUrl,
        {
          onDelivery: () => this.wake(),
          // Another process is deleting the endpoint: stop sending to it now (see in-flight.ts).
          onDeletion: (webhookId) => this.deps.delivery.inFlight.abortEndpoint(webhookId, 'deleted'),
          onSwitchOff: (webhookId) => this.deps.delivery.inFlight.abortEndpoint(webhookId, 'switched_off'),
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
   * Stops claiming and lets attempts in flight finish for up to `timeoutMs`; the rest are stopped
   * unrecorded and their leases given back, so another worker sends them again (at least once).
   */
  async stop(timeoutMs: number): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const stopped = this.stopping.signal.aborted;
    await this.listener?.close();
    await this.fillChain;
    if (!stopped) {
      let deadline: NodeJS.Timeout | undefined;
      const settled = Promise.allSettled([...this.running]);
      await Promise.race([settled, new Promise((resolve) => (deadline = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(deadline);
    }
    this.stopping.abort();
    await Promise.allSettled([...this.running]);
  }

  private wake(): void {
    if (this.stopping.signal.aborted || performance.now() < this.pausedUntil) return;
    this.fill().then(
      () => this.outage.succeeded(),
      (error: unknown) => this.backOff(error),
    );
  }

  private backOff(error: unknown): void {
    this.pausedUntil = performance.now() + this.outage.failed(error);
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
    if (this.stopping.signal.aborted || free <= 0) return 0;
    const endpointCap = this.options.perEndpointConcurrency;
    const orgCap = this.options.perOrgConcurrency;
    const full = (counts: Map<string, number>, cap: number) =>
      [...counts].filter(([, count]) => count >= cap).map(([id]) => id);
    const now = this.deps.clock.now();
    const candidates = await findDueDeliveries(this.deps.db, now, {
      perEndpoint: endpointCap,
      perOrg: orgCap,
      limit: free * 2,
      skipEndpoints: full(this.perEndpoint, endpointCap),
      skipOrgs: full(this.perOrg, orgCap),
    });
    const endpoints = new Map(this.perEndpoint);
    const orgs = new Map(this.perOrg);
    const picked: string[] = [];
    for (const candidate of candidates) {
      const byEndpoint = endpoints.get(candidate.webhook_id) ?? 0;
      const byOrg = orgs.get(candidate.org_id) ?? 0;
      if (byEndpoint >= endpointCap || byOrg >= orgCap || picked.length >= free) continue;
      endpoints.set(candidate.webhook_id, byEndpoint + 1);
      orgs.set(candidate.org_id, byOrg + 1);
      picked.push(candidate.id);
    }
    const claimed = await claimDeliveries(this.deps.db, picked, {
      now,
      owner: this.deps.delivery.owner,
      expiresAt: new Date(now.getTime() + this.deps.delivery.leaseMs),
    });
    for (const delivery of claimed) this.launch(delivery);
    // Another process claimed some of the picks first: what it left may be due too, so look again
    // now rather than at the next notification or sweep (a few times in a row at most: a pick can
    // also fail for good, when its endpoint is being deleted).
    if (claimed.length === picked.length) this.passesAfterLostRaces = 0;
    else if (this.passesAfterLostRaces < MAX_PASSES_AFTER_LOST_RACES) {
      this.passesAfterLostRaces += 1;
      this.wake();
    }
    return claimed.length;
  }

  private launch(delivery: ClaimedDelivery): void {
    const count = (counts: Map<string, number>, key: string, by: number) => {
      const value = (counts.get(key) ?? 0) + by;
      if (value > 0) counts.set(key, value);
      else counts.delete(key);
    };
    count(this.perEndpoint, delivery.webhookId, 1);
    count(this.perOrg, delivery.orgId, 1);
    const run: Promise<void> = deliverOnce(this.deps, delivery, this.stopping.signal)
      .then(
        () => this.outage.succeeded(),
        // The attempt could not be recorded: its lease lapses and the delivery is tried again.
        (error: unknown) => this.backOff(error),
      )
      .finally(() => {
        count(this.perEndpoint, delivery.webhookId, -1);
        count(this.perOrg, delivery.orgId, -1);
        this.running.delete(run);
        this.wake();
      });
    this.running.add(run);
  }
}

/**
 * Creates and starts the delivery worker for the app; LISTENs on the app's database
 * (`config.databaseUrl`, which main.ts sets to the database it opened). Throws without a database URL.
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
