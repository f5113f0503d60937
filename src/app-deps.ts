// The explicit dependencies every handler, service and worker receives; built once per process.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { systemClock, type Clock } from './clock.js';
import type { Db } from './database/connect.js';
import type { ProviderModule } from './calls/provider/types.js';
import { createProviders, type Providers } from './calls/provider/registry.js';
import { createDeliveryRuntime, type DeliveryRuntime } from './webhooks/delivery/runtime.js';
import { createReadiness, type Readiness } from './health/readiness.js';
import { createMetrics, watchPool, type Metrics, type MetricsRole } from './observability/metrics.js';
import type pg from 'pg';
import { createImportRuntime, type ImportRuntime } from './contacts/import-runtime.js';
import { createJobEngine, type JobEngine } from './jobs/engine.js';
import { SERVICE_JOBS, type ServiceJobs } from './jobs/registry.js';

export interface AppDeps {
  db: Db;
  config: Config;
  clock: Clock;
  logger: Logger;
  /** The voice providers this process's configuration has credentials for. */
  providers: Providers;
  /** The webhook senders' shared machinery (agent, sends in flight, lease owner). */
  delivery: DeliveryRuntime;
  /** This process's name in logs and on the leases it takes: host, pid and a random suffix. */
  instanceId: string;
  /** Whether the process should get traffic (draining, database probe). */
  readiness: Readiness;
  /** The process's Prometheus metrics. */
  metrics: Metrics;
  /** The CSV contact imports this process runs in the background. */
  imports: ImportRuntime;
  /** The job engine (src/jobs/): every process sends jobs, a worker process runs them. */
  jobs: JobEngine<ServiceJobs>;
}

/** A name for this process, unique among the processes sharing a database. */
export function newInstanceId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/**
 * Builds the dependencies of one process: the system clock unless given, and the configured providers.
 * Throws on an invalid WEBHOOK_PRIVATE_ALLOWLIST range. Release them with closeAppDeps.
 */
export function createAppDeps(parts: {
  db: Db;
  config: Config;
  logger: Logger;
  clock?: Clock;
  /** Provider modules beside the registry's (a test's own provider). */
  providers?: readonly ProviderModule[];
  /** The pool behind `db`, whose use the metrics report. */
  pool?: pg.Pool;
  /** The process's name when its logger already carries it (see createLogger); made here otherwise. */
  instanceId?: string;
  /** The parts the process runs, whose series its metrics export (both unless given). */
  role?: MetricsRole;
}): AppDeps {
  const instanceId = parts.instanceId ?? newInstanceId();
  const role = parts.role ?? 'all';
  const metrics = createMetrics(role);
  if (parts.pool) watchPool(metrics, parts.pool);
  // Every line this process logs names it.
  const logger = parts.instanceId ? parts.logger : parts.logger.child({ instance: instanceId });
  return {
    db: parts.db,
    config: parts.config,
    logger,
    clock: parts.clock ?? systemClock,
    providers: createProviders(parts.config, logger, parts.providers),
    delivery: createDeliveryRuntime(parts.db, parts.config, logger, instanceId),
    instanceId,
    readiness: createReadiness(parts.config.databaseUrl, logger),
    metrics,
    imports: createImportRuntime(),
    jobs: createJobEngine(SERVICE_JOBS, {
      url: parts.config.databaseUrl,
      config: parts.config,
      logger,
      metrics,
      supervise: role !== 'api',
    }),
  };
}

/**
 * Closes what createAppDeps opened besides the database pool: the delivery agent, the readiness probe,
 * the background imports (each stops after its batch and records how far it got), and the job engine's
 * pool (a worker process has stopped the engine already, with its shutdown timeout).
 */
export async function closeAppDeps(deps: AppDeps): Promise<void> {
  await Promise.all([
    deps.delivery.close(),
    deps.readiness.close(),
    deps.imports.close(),
    deps.jobs.stop(deps.config.shutdownTimeoutMs),
  ]);
}
