// `serve [--role api|worker|all] [--processes N]`: runs the service. The api role serves HTTP, the
// worker role runs call progress, webhook delivery and the background jobs, all does both; processes coordinate
// through PostgreSQL. With --processes N (api and all roles), N child processes share the HTTP port
// (node:cluster), one more runs the background work of the all role, and the primary opens (and
// migrates) the database, prints the banner and serves the metrics of them all.
import cluster from 'node:cluster';
import { createApp, requestListener } from '../app.js';
import { closeAppDeps, createAppDeps, newInstanceId, type AppDeps } from '../app-deps.js';
import { logProviderReadiness } from '../calls/provider-readiness.js';
import type { Config } from '../config.js';
import { openDatabase, startupMigrationMode, type OpenDatabase } from '../database/open.js';
import { startHttpServer, type HttpServer } from '../http/server.js';
import { createLogger } from '../logger.js';
import { seedDemoData, type DemoData } from '../orgs/demo.js';
import { DEMO_ADMIN_EMAIL, inviteDemoAdmin } from '../members/demo.js';
import { countOrgs } from '../orgs/service.js';
import { startWorkers, type BackgroundWorker } from '../workers.js';
import { watchJobQueues, watchWebhookQueue, type Metrics } from '../observability/metrics.js';
import { startMetricsServer, type MetricsServer, type MetricsSource } from '../observability/metrics-server.js';
import { answerMetricsRequests, ClusterMetrics } from '../observability/cluster-metrics.js';
import { createReadiness } from '../health/readiness.js';
import { parse, UsageError } from './args.js';
import { lowerWorkerPriority } from './worker-priority.js';
import { adminCommand } from './invocation.js';
import { CLOSE_GRACE_MS, stopDeadlineMs, stopWithin, type StepReporter } from './bounded-stop.js';
import { configOrExit, reported, wantsHelp } from './command.js';
import {
  CHILD_ROLE_VARIABLE,
  DEFAULT_RESTART_POLICY,
  Supervisor,
  WORKER_UP_MESSAGE,
  type ChildRole,
} from './supervisor.js';

const USAGE = `Usage: voice-call-api serve [--role api|worker|all] [--processes N]

  --role api       serve the HTTP API only
  --role worker    run call progress, webhook delivery and the background jobs only (no HTTP port)
  --role all       both (the default)
  --processes N    run N HTTP processes sharing the port (api and all roles; default 1)

Without DATABASE_URL an embedded PostgreSQL is started under DATA_DIR, with demo data on the first
start. Pending migrations are applied first unless MIGRATE_ON_START=false.
`;

/** Which parts of the service a process runs. */
export type Role = 'api' | 'worker' | 'all';

function parseServe(argv: string[]): { role: Role; processes: number } {
  const { values, positionals } = parse(argv, { role: { type: 'string' }, processes: { type: 'string' } });
  if (positionals.length > 0) throw new UsageError(`serve takes no arguments, got "${positionals.join(' ')}"`);
  const role = (values.role as string | undefined) ?? 'all';
  if (role !== 'api' && role !== 'worker' && role !== 'all') {
    throw new UsageError(`--role must be api, worker or all, got "${role}"`);
  }
  const processes = Number((values.processes as string | undefined) ?? '1');
  if (!Number.isInteger(processes) || processes < 1 || processes > 64) {
    throw new UsageError('--processes must be a whole number from 1 to 64');
  }
  if (processes > 1 && role === 'worker') throw new UsageError('--processes applies to the api and all roles');
  return { role, processes };
}

/** Why a listener could not have its address, by the error's code. */
const LISTEN_FAILURES: Record<string, string> = {
  EADDRINUSE: 'the port is already in use',
  EADDRNOTAVAIL: 'the address is not one of this machine',
  EACCES: 'permission denied',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name does not resolve',
};

/**
 * Starts a listener; when its address cannot be had (in use, not this machine's, a host that does not
 * resolve), the error names the address and the settings that chose it.
 */
async function naming<T>(
  settings: string,
  address: { host: string; port: number },
  start: (address: { host: string; port: number }) => Promise<T>,
): Promise<T> {
  try {
    return await start(address);
  } catch (error) {
    const code = String((error as NodeJS.ErrnoException).code);
    const why = LISTEN_FAILURES[code];
    if (!why) throw error;
    throw new Error(`cannot listen on ${address.host}:${address.port} (${settings}): ${why} (${code})`, {
      cause: error,
    });
  }
}

/** The banner printed once the service runs: where it is and, the first time, how to begin. */
function printBanner(
  config: Config,
  start: {
    port: number | null;
    role: Role;
    processes: number;
    database: OpenDatabase;
    demo: DemoData | null;
    /** The path of the demo admin's one-time dashboard link, on the first start only. */
    dashboardLink: string | null;
    orgs: number;
  },
): void {
  // A derived base URL names the port actually bound (PORT=0 picks one); a configured one stands as set.
  const base =
    start.port === null
      ? null
      : config.publicBaseUrlSet
        ? config.publicBaseUrl
        : config.publicBaseUrl.replace(/:\d+$/, `:${start.port}`);
  const processes = start.processes > 1 ? `, ${start.processes} HTTP processes` : '';
  const lines = ['', `  Voice-call API is running (role ${start.role}${processes}).`];
  if (base) lines.push(`  Base URL : ${base}/api/v1`, `  Docs     : ${base}/docs`, `  Dashboard: ${base}/dashboard`);
  lines.push(`  Database : ${start.database.embedded ? `embedded PostgreSQL (${config.dataDir})` : 'DATABASE_URL'}`);
  const { demo } = start;
  if (demo?.keys && base) {
    lines.push(
      `  Demo org : ${demo.orgId} (agent ${demo.agentId})`,
      `  Test key : ${demo.keys.test}   (test mode: simulated calls, test credits)`,
      `  Live key : ${demo.keys.live}   (live mode: the agent's voice provider, real credits)`,
      '  Both keys are shown once; store them.',
      '',
      '  Try it in test mode:',
      `  curl -s -X POST ${base}/api/v1/calls \\`,
      `    -H "Authorization: Bearer ${demo.keys.test}" -H "Content-Type: application/json" \\`,
      `    -d '{"agent_id":"${demo.agentId}","to_e164":"+919812345678"}'`,
    );
    if (start.dashboardLink) {
      lines.push(
        '',
        `  Dashboard sign-in for ${DEMO_ADMIN_EMAIL} (one-time link, 72 hours; choose a password there):`,
        `  ${base}${start.dashboardLink}`,
      );
    }
  } else if (demo) {
    lines.push(
      `  Demo org : ${demo.orgId}; a new key: ${adminCommand()} key create --org ${demo.orgId} --mode test|live`,
    );
  } else if (start.orgs === 0) {
    lines.push(
      '',
      '  The database has no organisation yet. Create one, an agent and an API key:',
      `    ${adminCommand()} org create --name "Acme" --credits 500000`,
      `    ${adminCommand()} agent create --org ORG_ID --name "Priya"`,
      `    ${adminCommand()} key create --org ORG_ID`,
    );
  }
  process.stdout.write(lines.join('\n') + '\n\n');
}

/** A running process of the service. */
interface Running {
  port: number | null;
  deps: AppDeps;
  /** Stops every part, naming each step it begins through `step`. */
  stop(signal: NodeJS.Signals, step: StepReporter): Promise<void>;
}

/** Starts this process's part of the service on an opened database, and its metrics server when asked. */
async function startParts(
  config: Config,
  database: OpenDatabase,
  parts: { http: boolean; background: boolean; metricsServer: boolean },
): Promise<Running> {
  // The process works on the database actually opened (embedded when DATABASE_URL is unset).
  const deps = createAppDeps({
    db: database.db,
    pool: database.pool,
    config: { ...config, databaseUrl: database.url },
    logger: processLogger(config),
    instanceId: INSTANCE_ID,
    role: parts.http && parts.background ? 'all' : parts.http ? 'api' : 'worker',
  });
  // A cluster child answers its primary's requests for metrics from the start.
  if (cluster.isWorker) answerMetricsRequests(deps.metrics.registry);
  // Before anything runs: the threads it starts inherit the priority.
  if (parts.background && !parts.http) lowerWorkerPriority(config.workerNice, deps.logger);
  if (parts.background) {
    watchWebhookQueue(deps.metrics, database.db);
    watchJobQueues(deps.metrics, () => deps.jobs.depths());
  }
  await logProviderReadiness(deps);
  // Every address is bound before any background work starts, so a taken port stops nothing mid-way.
  const listener = parts.http ? requestListener(await createApp(deps)) : null;
  const metricsServer =
    parts.metricsServer && config.metricsPort !== null
      ? await naming(
          'METRICS_HOST and METRICS_PORT',
          { host: config.metricsHost, port: config.metricsPort },
          (address) => startMetricsServer(processMetrics(deps.metrics), deps.readiness, address),
        )
      : null;
  const server: HttpServer | null = listener
    ? await naming('HOST and PORT', config, () => startHttpServer(listener, config, deps.readiness, deps.logger))
    : null;
  const workers: BackgroundWorker[] = parts.background ? await startWorkers(deps) : [];
  return {
    deps,
    port: server?.port ?? null,
    stop: async (signal, step) => {
      deps.logger.info({ signal }, 'shutting down');
      const timeoutMs = config.shutdownTimeoutMs;
      // An interactive Ctrl-C stops at once; a SIGTERM from an orchestrator drains first.
      step('draining HTTP requests');
      await server?.shutdown({ drainMs: signal === 'SIGTERM' ? config.shutdownDrainMs : 0, timeoutMs });
      step('stopping the background work');
      await Promise.all(workers.map((worker) => worker.stop(timeoutMs)));
      step('closing the metrics server');
      await metricsServer?.close();
      step('closing database listeners');
      await closeAppDeps(deps);
      deps.logger.info('stopped');
    },
  };
}

/** The metrics of this process alone. */
function processMetrics(metrics: Metrics): MetricsSource {
  return { contentType: metrics.registry.contentType, metrics: () => metrics.registry.metrics() };
}

/**
 * Resolves with the exit status `stop` gives for the first of SIGTERM and SIGINT, once it has run; later
 * signals are ignored.
 */
function untilStopped(stop: (signal: NodeJS.Signals) => Promise<number>): Promise<number> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      stop(signal).then(resolve, reject);
    };
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    process.on('SIGINT', () => onSignal('SIGINT'));
  });
}

/** This process's name, on every line it logs and on the leases it takes. */
const INSTANCE_ID = newInstanceId();

/** How long the primary waits for a child's metrics before it serves the child's last answer instead. */
const CHILD_METRICS_TIMEOUT_MS = 3_000;

function processLogger(config: Config) {
  return createLogger(config.logLevel, undefined, INSTANCE_ID);
}

async function openForServing(config: Config) {
  return openDatabase(config, { migrations: startupMigrationMode(config), logger: processLogger(config) });
}

/**
 * Stops the process's parts and closes its database within the stop's deadline; resolves 0, or 1 when
 * it gave up on what was left.
 */
function stopParts(config: Config, running: Running, database: OpenDatabase, signal: NodeJS.Signals): Promise<number> {
  return stopWithin(stopDeadlineMs(config, signal), running.deps.logger, async (step) => {
    await running.stop(signal, step);
    step('closing the database');
    await database.close();
  });
}

/** A single process: the role's parts, the banner, then until a signal. */
async function runSingle(role: Role): Promise<number> {
  const startedAt = performance.now();
  const config = configOrExit();
  const database = await openForServing(config);
  const demo = database.embedded ? await seedDemoData(database.db) : null;
  const dashboardLink = demo?.keys ? await inviteDemoAdmin(database.db, demo.orgId) : null;
  const running = await startParts(config, database, {
    http: role !== 'worker',
    background: role !== 'api',
    metricsServer: true,
  });
  const orgs = await countOrgs(database.db);
  // Signals are handled before anyone is told the service runs: one sent at once still stops it gracefully.
  const stopped = untilStopped((signal) => stopParts(config, running, database, signal));
  printBanner(config, { port: running.port, role, processes: 1, database, demo, dashboardLink, orgs });
  running.deps.logger.info({ role, port: running.port, readyMs: Math.round(performance.now() - startedAt) }, 'started');
  return stopped;
}

/** A cluster child: one HTTP process on the shared port, or the background work. */
async function runChild(): Promise<number> {
  const config = configOrExit();
  const role = process.env[CHILD_ROLE_VARIABLE] === 'worker' ? 'worker' : 'api';
  // The primary opened (and migrated) the database already.
  const database = await openDatabase(config, { migrations: 'ignore' });
  const running = await startParts(config, database, {
    http: role === 'api',
    background: role === 'worker',
    metricsServer: false,
  });
  // An api child is up once it listens, which its primary sees; a worker child says so itself.
  if (role === 'worker') process.send?.(WORKER_UP_MESSAGE);
  return untilStopped((signal) => stopParts(config, running, database, signal));
}

/**
 * The cluster primary: opens (and migrates) the database, starts the HTTP processes and, for the all
 * role, one background process under a Supervisor that replaces any that dies, serves the metrics of
 * all of them and a /readyz that answers for them, and stops them on a signal. Exits 1 when a child
 * keeps dying.
 */
async function runPrimary(role: Role, processes: number): Promise<number> {
  const config = configOrExit();
  const database = await openForServing(config);
  const demo = database.embedded ? await seedDemoData(database.db) : null;
  const dashboardLink = demo?.keys ? await inviteDemoAdmin(database.db, demo.orgId) : null;
  const logger = processLogger(config);
  cluster.setupPrimary({ args: ['serve'] });
  const roles: ChildRole[] = [
    ...Array.from({ length: processes }, () => 'api' as const),
    ...(role === 'all' ? ['worker' as const] : []),
  ];
  // The children get the opened database's URL itself (an empty DATABASE_URL_FILE counts as unset).
  const supervisor = new Supervisor(roles, { DATABASE_URL: database.url, DATABASE_URL_FILE: '' }, logger, {
    ...DEFAULT_RESTART_POLICY,
    startTimeoutMs: config.childStartTimeoutMs,
  });
  const readiness = createReadiness(database.url, logger);
  const childMetrics = new ClusterMetrics(CHILD_METRICS_TIMEOUT_MS);
  // The metrics port is bound before any child starts (its /readyz says no_http_process until one is
  // up), so a taken port stops nothing mid-way.
  let metricsServer: MetricsServer | null = null;
  let port: number | null;
  try {
    metricsServer =
      config.metricsPort !== null
        ? await naming(
            'METRICS_HOST and METRICS_PORT',
            { host: config.metricsHost, port: config.metricsPort },
            (address) =>
              startMetricsServer(
                {
                  contentType: childMetrics.contentType,
                  metrics: async () => (await childMetrics.text()) + (await supervisor.metricsText()),
                },
                { notReadyReason: async () => (await readiness.notReadyReason()) ?? supervisor.notReadyReason() },
                address,
              ),
          )
        : null;
    port = await supervisor.start();
  } catch (error) {
    await supervisor.stop('SIGTERM');
    await metricsServer?.close();
    await readiness.close();
    await database.close();
    throw error;
  }
  const orgs = await countOrgs(database.db);
  // One shutdown, whether a signal or the supervisor giving up asks first (or both do). The children
  // stop within their own deadline; the primary's allows for that, then closes its own connections.
  let stopping: Promise<number> | null = null;
  const stopAll = (signal: NodeJS.Signals) =>
    stopWithin(stopDeadlineMs(config, signal) + CLOSE_GRACE_MS, logger, async (step) => {
      readiness.startDraining();
      step('stopping the child processes');
      await supervisor.stop(signal);
      step('closing the metrics server');
      await metricsServer?.close();
      step('closing the database');
      await readiness.close();
      await database.close();
    });
  const shutDown = (signal: NodeJS.Signals) => (stopping ??= stopAll(signal));
  const gaveUp = supervisor.gaveUp.then(async () => {
    await shutDown('SIGTERM');
    return 1;
  });
  // Signals are handled before anyone is told the service runs: one sent at once still stops it gracefully.
  const stopped = Promise.race([untilStopped(shutDown), gaveUp]);
  printBanner(config, { port, role, processes, database, demo, dashboardLink, orgs });
  return stopped;
}

/** The serve command. */
export async function serve(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  return reported(USAGE, async () => {
    const { role, processes } = parseServe(argv);
    if (cluster.isWorker) return runChild();
    if (processes > 1) return runPrimary(role, processes);
    return runSingle(role);
  });
}
