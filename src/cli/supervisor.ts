// Keeps the children of `serve --processes N` running: a child that dies unasked, or does not start in
// time, is logged, counted and forked again after a growing pause; a child that keeps dying (often
// within a window, or every time before it is up, however slowly) makes the whole service give up
// (exit 1), so that the orchestrator sees the failure instead of a primary that serves nothing or never
// finishes starting. The state of the children is what the primary's /readyz answers from.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import { METRIC_PREFIX } from '../observability/metrics.js';

/** What a child runs: one HTTP process on the shared port, or the background work. */
export type ChildRole = 'api' | 'worker';

/** The environment variable that tells a forked child its role. */
export const CHILD_ROLE_VARIABLE = 'VOICE_CALL_API_CHILD_ROLE';

/** The message a worker child sends its primary once its background work runs: from then on it is up. */
export const WORKER_UP_MESSAGE = 'voice-call-api:worker-up';

/** When to give up on a child that keeps dying, and how long to wait before forking it again. */
export interface RestartPolicy {
  /** The first pause before a restart; each quick death doubles it, up to maxDelayMs. */
  initialDelayMs: number;
  maxDelayMs: number;
  /**
   * This many deaths of one child within windowMs make the service give up; so do this many in a row
   * with none of its children up in between, however long they took.
   */
  maxDeaths: number;
  windowMs: number;
  /** How long a child may take to be up (listening, for an api child); past it, it is killed and counted as a death. */
  startTimeoutMs: number;
}

/**
 * The restarts `serve` uses, with CHILD_START_TIMEOUT_MS as the start timeout: 0.5 s, 1 s, 2 s... at
 * most 10 s between restarts; 5 deaths in a minute, or 5 in a row before a child is up, is a crash loop.
 */
export const DEFAULT_RESTART_POLICY: Omit<RestartPolicy, 'startTimeoutMs'> = {
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  maxDeaths: 5,
  windowMs: 60_000,
};

/** "an api child" or "a worker child", for log lines and the reason the service gives up. */
const childOfRole = (role: ChildRole) => (role === 'api' ? 'an api child' : 'a worker child');

/** One child slot: the process now filling it (or none while it waits to be forked again). */
interface Slot {
  role: ChildRole;
  worker: Worker | null;
  /** Whether the HTTP child listens (an api child) or runs its background work (a worker child). */
  up: boolean;
  deaths: number[];
  /** Deaths since a child of this slot was last up. */
  failedStarts: number;
  timer: NodeJS.Timeout | null;
  /** Resolved with the slot's HTTP port (null for a worker) the first time one of its children is up. */
  firstUp: PromiseWithResolvers<number | null>;
}

/**
 * The supervisor's own metrics, served beside the children's on the primary's metrics port: only for
 * the roles it runs children of, each at 0 from the start.
 */
function supervisorMetrics(roles: ChildRole[]) {
  const registry = new Registry();
  const restarts = new Counter({
    name: `${METRIC_PREFIX}child_process_restarts_total`,
    help: 'Children of serve --processes that died unasked and were started again, by role',
    labelNames: ['role'] as const,
    registers: [registry],
  });
  const up = new Gauge({
    name: `${METRIC_PREFIX}child_processes_up`,
    help: 'Children of serve --processes that are running (api: listening), by role',
    labelNames: ['role'] as const,
    registers: [registry],
  });
  for (const role of new Set(roles)) {
    restarts.inc({ role }, 0);
    up.set({ role }, 0);
  }
  return { registry, restarts, up };
}

/** Forks and watches the children of the cluster primary. */
export class Supervisor {
  private readonly slots: Slot[];
  private stopping = false;
  private readonly metrics: ReturnType<typeof supervisorMetrics>;
  private giveUp: (reason: string) => void = () => undefined;
  /** Resolves with the reason once a child died too often: the service should stop and exit 1. */
  readonly gaveUp: Promise<string>;

  constructor(
    roles: ChildRole[],
    private readonly env: Record<string, string>,
    private readonly logger: Logger,
    private readonly policy: RestartPolicy,
  ) {
    this.metrics = supervisorMetrics(roles);
    this.slots = roles.map((role) => ({
      role,
      worker: null,
      up: false,
      deaths: [],
      failedStarts: 0,
      timer: null,
      firstUp: Promise.withResolvers<number | null>(),
    }));
    this.gaveUp = new Promise((resolve) => (this.giveUp = resolve));
  }

  /**
   * Forks every child; resolves with the HTTP port once each slot has had a child up (null without an
   * api child), replacing those that die or hang on the way. Rejects when the supervisor gives up first.
   */
  async start(): Promise<number | null> {
    for (const slot of this.slots) this.fork(slot);
    const outcome = await Promise.race([
      Promise.all(this.slots.map((slot) => slot.firstUp.promise)).then((ports) => ({ ports })),
      this.gaveUp.then((reason) => ({ reason })),
    ]);
    if ('reason' in outcome) throw new Error(`the service could not start: ${outcome.reason}`);
    return outcome.ports.find((port) => port !== null) ?? null;
  }

  /** The Prometheus text of the supervisor's metrics. */
  metricsText(): Promise<string> {
    return this.metrics.registry.metrics();
  }

  /** Why the children cannot serve now, or null: no HTTP child listens, or the background child is down. */
  notReadyReason(): 'no_http_process' | 'background_process_down' | null {
    const api = this.slots.filter((slot) => slot.role === 'api');
    if (api.length > 0 && !api.some((slot) => slot.up)) return 'no_http_process';
    if (this.slots.some((slot) => slot.role === 'worker' && !slot.up)) return 'background_process_down';
    return null;
  }

  /** Stops restarting, sends `signal` to every child and waits until all have exited. */
  async stop(signal: NodeJS.Signals): Promise<void> {
    this.stopping = true;
    const exits: Promise<void>[] = [];
    for (const slot of this.slots) {
      if (slot.timer) clearTimeout(slot.timer);
      const worker = slot.worker;
      if (!worker || worker.isDead()) continue;
      exits.push(new Promise((resolve) => worker.once('exit', () => resolve())));
      worker.process.kill(signal);
    }
    await Promise.all(exits);
  }

  private fork(slot: Slot): void {
    const worker = cluster.fork({ ...this.env, [CHILD_ROLE_VARIABLE]: slot.role });
    slot.worker = worker;
    slot.up = false;
    // A child that hangs before it is up is killed; its exit counts as a death (onExit), even if it
    // reports up between the kill and its exit.
    let killed = false;
    const startTimer = setTimeout(() => {
      killed = true;
      this.logger.error(
        { role: slot.role, pid: worker.process.pid, startTimeoutMs: this.policy.startTimeoutMs },
        `${childOfRole(slot.role)} process did not start within ${this.policy.startTimeoutMs / 1000} s; killing it`,
      );
      worker.process.kill('SIGKILL');
    }, this.policy.startTimeoutMs);
    worker.once('exit', (code, signal) => {
      clearTimeout(startTimer);
      this.onExit(slot, worker, code, signal);
    });
    const started = (port: number | null) => {
      clearTimeout(startTimer);
      if (killed || slot.worker !== worker) return;
      slot.up = true;
      slot.failedStarts = 0;
      this.metrics.up.inc({ role: slot.role });
      slot.firstUp.resolve(port);
    };
    if (slot.role === 'api') {
      worker.once('listening', (address) => started(address.port));
      return;
    }
    const onMessage = (message: unknown) => {
      if (message !== WORKER_UP_MESSAGE) return;
      worker.off('message', onMessage);
      started(null);
    };
    worker.on('message', onMessage);
  }

  private onExit(slot: Slot, worker: Worker, code: number | null, signal: string | null): void {
    if (slot.worker !== worker) return;
    if (slot.up) this.metrics.up.dec({ role: slot.role });
    else slot.failedStarts += 1;
    slot.up = false;
    slot.worker = null;
    if (this.stopping) return;
    const now = Date.now();
    slot.deaths = [...slot.deaths.filter((at) => now - at < this.policy.windowMs), now];
    const pid = worker.process.pid;
    const reason =
      slot.deaths.length >= this.policy.maxDeaths
        ? `${childOfRole(slot.role)} died ${slot.deaths.length} times within ${this.policy.windowMs / 1000} s`
        : slot.failedStarts >= this.policy.maxDeaths
          ? `${childOfRole(slot.role)} died ${slot.failedStarts} times in a row before it was up`
          : null;
    if (reason) {
      this.logger.fatal({ role: slot.role, pid, code, signal }, `${reason}; stopping the service`);
      this.giveUp(reason);
      return;
    }
    const delayMs = Math.min(this.policy.maxDelayMs, this.policy.initialDelayMs * 2 ** (slot.deaths.length - 1));
    this.logger.error(
      { role: slot.role, pid, code, signal, restartInMs: delayMs },
      `${childOfRole(slot.role)} process exited unexpectedly; starting a new one`,
    );
    this.metrics.restarts.inc({ role: slot.role });
    slot.timer = setTimeout(() => {
      slot.timer = null;
      if (!this.stopping) this.fork(slot);
    }, delayMs);
  }
}
