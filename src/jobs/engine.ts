// The job engine: pg-boss over PostgreSQL, on a small pool of its own (JOB_POOL_SIZE), so a burst of
// jobs never takes the connections requests need, and no job holds a connection while it runs. Every
// process may send jobs; only a worker process runs them and looks after them (a job whose worker died
// or went silent is failed after JOB_HEARTBEAT_S, then run again where its kind allows). Each kind is a
// pg-boss queue with the `stately` policy: per key, at most one job waiting, one waiting for a retry and
// one running. The engine starts on first use, and while the database does not answer it keeps trying,
// logging the outage once when it begins and once when it ends. See docs/jobs.md.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import type { JobQueueReading, Metrics } from '../observability/metrics.js';
import {
  JOB_HEARTBEAT_S,
  JOB_KEEP_FINISHED_S,
  JOB_OUTAGE_PROBE_MS,
  JOB_SCHEMA,
  JOB_STATEMENT_TIMEOUT_MS,
  JOB_SUPERVISE_INTERVAL_S,
} from './policy.js';
import type { JobData, JobName, JobRegistry, PeriodicJobName } from './registry.js';

/** How a job is sent. */
export interface SendOptions {
  /**
   * At most one job of its kind with this key waits to run: a send while one waits returns null. A
   * running one does not count, so a successor may be sent meanwhile; it starts once that run ended,
   * never beside it. Without a key, every send queues a job.
   */
  key?: string;
  /** The job runs at this time or later (at once when unset or past). */
  runAt?: Date;
  /** With a key: a job of that key already waiting is moved to `runAt` (and given `data`) instead. */
  replace?: boolean;
}

/** What a handler knows of the run it is in. */
export interface JobRun {
  id: string;
  /** 1 for the first run, 2 for the first retry, and so on. */
  attempt: number;
  /**
   * Aborted when the engine learns the job was taken from this run: its time ran out, or the engine
   * stopped and the runs in flight outlived the stop's timeout.
   */
  signal: AbortSignal;
}

/** Runs one job; a rejection fails the run. */
export type JobHandler<T> = (data: T, run: JobRun) => Promise<void>;

/** The job engine a process carries in AppDeps (`jobs`). */
export interface JobEngine<R extends JobRegistry> {
  /**
   * Queues a job of kind `name`; resolves with its id, or null when `key` already has a job waiting
   * (with `replace`, that job is moved instead, and the id is the moved job's when pg-boss reports it).
   */
  send<N extends JobName<R>>(name: N, data: JobData<R, N>, options?: SendOptions): Promise<string | null>;
  /**
   * Runs jobs of kind `name` in this process, up to `concurrency` at once (default 1); resolves once
   * the handler is registered (after an outage, once the database answers), or when the engine stops.
   */
  work<N extends JobName<R>>(
    name: N,
    handler: JobHandler<JobData<R, N>>,
    options?: { concurrency?: number },
  ): Promise<void>;
  /**
   * Runs `handler` once per `intervalMs` across every process that calls this, never two runs at once
   * and each run at least `intervalMs` after the one before began. The first run is due `intervalMs`
   * after the first process asked; the schedule lives in the database, so restarts do not move it.
   * The handler's signal is aborted as soon as the engine begins to stop (a run cut short is never run
   * again: the next interval's run does its work).
   */
  every<N extends PeriodicJobName<R>>(
    name: N,
    intervalMs: number,
    handler: (signal: AbortSignal) => Promise<void>,
  ): Promise<void>;
  /** Each kind's queue depth, as the engine last counted it (an empty list before it started). */
  depths(): Promise<JobQueueReading[]>;
  /** Stops taking jobs and lets runs in flight finish for up to `timeoutMs`; the rest run again elsewhere. */
  stop(timeoutMs: number): Promise<void>;
}

/** The key every run of a periodic kind carries, so one waits and one runs at a time. */
const PERIODIC_KEY = 'every';

/** What the engine needs of the process. */
export interface JobEngineParts {
  /** The database's URL; null makes every use fail (a process without a database). */
  url: string | null;
  config: Pick<Config, 'jobPoolSize' | 'jobPollIntervalMs' | 'dbConnectTimeoutMs'>;
  logger: Logger;
  metrics: Metrics;
  /** Whether this process runs jobs and looks after them (the worker role). */
  supervise: boolean;
}

/** Creates an engine for the kinds of `registry`; nothing connects until it is first used. */
export function createJobEngine<R extends JobRegistry>(registry: R, parts: JobEngineParts): JobEngine<R> {
  return new PgBossEngine(registry, parts);
}

class PgBossEngine<R extends JobRegistry> implements JobEngine<R> {
  private readonly boss: PgBoss | null;
  private starting: Promise<void> | null = null;
  private started = false;
  private stopping: Promise<void> | null = null;
  private readonly stopped = new AbortController();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** When the current outage began (performance.now()), or null while the database answers. */
  private outageSince: number | null = null;

  constructor(
    private readonly registry: R,
    private readonly parts: JobEngineParts,
  ) {
    const { url, config, supervise } = parts;
    this.boss = url
      ? new PgBoss({
          connectionString: url,
          schema: JOB_SCHEMA,
          application_name: 'voice-call-api jobs',
          max: config.jobPoolSize,
          connectionTimeoutMillis: config.dbConnectTimeoutMs,
          options: `-c statement_timeout=${JOB_STATEMENT_TIMEOUT_MS}`,
          // The migrate step installs and upgrades the schema (src/jobs/schema.ts); a process only checks it.
          migrate: false,
          supervise,
          superviseIntervalSeconds: JOB_SUPERVISE_INTERVAL_S,
          monitorIntervalSeconds: JOB_SUPERVISE_INTERVAL_S,
          // Periodic jobs are keyed jobs that queue their successor (see every), so no cron pass runs.
          schedule: false,
          registerInstance: false,
          openTelemetry: { enabled: false },
        })
      : null;
    // pg-boss reports failures of its own loops (polls, heartbeats, supervision) here, never by throwing.
    this.boss?.on('error', (error) => this.troubled(error));
    this.boss?.on('warning', (warning) =>
      parts.logger.warn({ warning: warning.data }, `job engine: ${warning.message}`),
    );
    for (const job of Object.keys(registry)) {
      parts.metrics.jobsCompleted.inc({ job }, 0);
      parts.metrics.jobsFailed.inc({ job }, 0);
      parts.metrics.jobsRetried.inc({ job }, 0);
    }
  }

  async send<N extends JobName<R>>(name: N, data: JobData<R, N>, options: SendOptions = {}): Promise<string | null> {
    const boss = await this.ready();
    const settings = {
      // A job without a key is its own key: the queue's policy then limits nothing.
      singletonKey: options.key ?? randomUUID(),
      ...(options.runAt ? { startAfter: options.runAt } : {}),
    };
    if (options.replace && options.key !== undefined) {
      const answer = await boss.upsert(name, data, { ...settings, startAfter: options.runAt ?? new Date() });
      return answer.jobs[0] ?? null;
    }
    return boss.send(name, data, settings);
  }

  async work<N extends JobName<R>>(
    name: N,
    handler: JobHandler<JobData<R, N>>,
    options: { concurrency?: number } = {},
  ): Promise<void> {
    const kind = this.registry[name]!;
    const { metrics, logger, config } = this.parts;
    await this.untilStarted(async (boss) => {
      await boss.work<JobData<R, N>>(
        name,
        {
          localConcurrency: options.concurrency ?? 1,
          batchSize: 1,
          pollingIntervalSeconds: config.jobPollIntervalMs / 1000,
        },
        async ([job]) => {
          if (!job) return;
          this.answered();
          if (job.retryCount > 0) metrics.jobsRetried.inc({ job: name });
          const attempt = job.retryCount + 1;
          try {
            await handler(job.data, { id: job.id, attempt, signal: job.signal });
          } catch (error) {
            metrics.jobsFailed.inc({ job: name });
            const again = attempt <= kind.retries;
            logger.warn(
              { err: error, job: name, jobId: job.id, attempt },
              again ? 'job failed; it runs again' : 'job failed; it does not run again',
            );
            throw error;
          }
          metrics.jobsCompleted.inc({ job: name });
        },
      );
    });
  }

  async every<N extends PeriodicJobName<R>>(
    name: N,
    intervalMs: number,
    handler: (signal: AbortSignal) => Promise<void>,
  ): Promise<void> {
    const next = () => new Date(Date.now() + intervalMs);
    await this.work(name, async (_data, run) => {
      // The next run is due one interval after this one began. Queued now, it waits while this one
      // runs; one a process queued sooner (see seed) is moved to that time.
      const boss = await this.ready();
      await boss.upsert(name, {}, { singletonKey: PERIODIC_KEY, startAfter: next() });
      await handler(AbortSignal.any([run.signal, this.stopped.signal]));
    });
    // Queues a run when none waits: the first one ever, or after a run that could not queue its successor.
    const seed = () =>
      this.ready()
        .then((boss) => boss.send(name, {}, { singletonKey: PERIODIC_KEY, startAfter: next() }))
        .then(
          () => this.answered(),
          (error: unknown) => this.troubled(error),
        );
    if (this.stopped.signal.aborted) return;
    await seed();
    const timer = setInterval(() => void seed(), intervalMs);
    timer.unref();
    this.timers.add(timer);
  }

  async depths(): Promise<JobQueueReading[]> {
    if (!this.boss || !this.started) return [];
    try {
      const queues = await this.boss.getQueues(Object.keys(this.registry));
      return queues.map((queue) => ({
        job: queue.name,
        ready: queue.readyCount,
        deferred: queue.deferredCount,
        active: queue.activeCount,
      }));
    } catch {
      return [];
    }
  }

  stop(timeoutMs: number): Promise<void> {
    return (this.stopping ??= this.stopOnce(timeoutMs));
  }

  private async stopOnce(timeoutMs: number): Promise<void> {
    this.stopped.abort();
    for (const timer of this.timers) clearInterval(timer);
    this.timers.clear();
    // pg-boss waits for runs in flight up to the timeout (1 s at the least), then fails what is left,
    // so another worker runs it again at once, and closes its pool.
    await this.boss?.stop({ graceful: true, timeout: timeoutMs, close: true });
  }

  /** The started pg-boss: started (and its queues created) on first use; a failed start is tried again next time. */
  private ready(): Promise<PgBoss> {
    const boss = this.boss;
    if (!boss) return Promise.reject(new Error('the job engine has no database URL'));
    if (this.stopped.signal.aborted) return Promise.reject(new Error('the job engine has stopped'));
    this.starting ??= this.start(boss).catch((error: unknown) => {
      this.starting = null;
      throw error;
    });
    return this.starting.then(() => boss);
  }

  private async start(boss: PgBoss): Promise<void> {
    await boss.start();
    for (const [name, kind] of Object.entries(this.registry)) {
      // Creates the queue unless it exists; an existing queue keeps the settings it was created with.
      await boss.createQueue(name, {
        policy: 'stately',
        retryLimit: kind.retries,
        expireInSeconds: kind.expirySeconds,
        heartbeatSeconds: JOB_HEARTBEAT_S,
        deleteAfterSeconds: JOB_KEEP_FINISHED_S,
      });
    }
    this.started = true;
    this.answered();
  }

  /** Runs `step` on the started engine, trying again after a failure until it succeeds or the engine stops. */
  private async untilStarted(step: (boss: PgBoss) => Promise<void>): Promise<void> {
    while (!this.stopped.signal.aborted) {
      try {
        await step(await this.ready());
        return;
      } catch (error) {
        if (this.stopped.signal.aborted) return;
        this.troubled(error);
        await sleep(JOB_OUTAGE_PROBE_MS, undefined, { signal: this.stopped.signal }).catch(() => undefined);
      }
    }
  }

  /** Notes a failure: the first of an outage is logged, with a probe that ends it once the database answers. */
  private troubled(error: unknown): void {
    if (this.outageSince !== null || this.stopped.signal.aborted) return;
    this.outageSince = performance.now();
    this.parts.logger.warn({ err: error }, 'job engine paused: its database step failed; retrying');
    const probe = setInterval(() => {
      if (this.outageSince === null || this.stopped.signal.aborted) {
        clearInterval(probe);
        this.timers.delete(probe);
        return;
      }
      this.ready()
        .then((boss) => boss.isInstalled())
        .then(
          () => this.answered(),
          () => undefined,
        );
    }, JOB_OUTAGE_PROBE_MS);
    probe.unref();
    this.timers.add(probe);
  }

  /** Notes that the database answered; ends an outage (logged once with its length). */
  private answered(): void {
    if (this.outageSince === null) return;
    const outageMs = Math.round(performance.now() - this.outageSince);
    this.outageSince = null;
    this.parts.logger.info({ outageMs }, 'job engine resumed: its database answers again');
  }
}
