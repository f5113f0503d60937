// `serve [--role api|worker|all] [--processes N]`: runs the service. The api role serves HTTP, the
// worker role runs call progress and webhook delivery, all does both; processes coordinate through
// PostgreSQL. With --processes N (api and all roles), N child processes share the HTTP port
// (node:cluster) while the primary opens the database (and migrates it), prints the banner and, for
// the all role, runs the background work.
import cluster from 'node:cluster';
import { createApp } from '../app.js';
import { closeAppDeps, createAppDeps, type AppDeps } from '../app-deps.js';
import type { Config } from '../config.js';
import { openDatabase, startupMigrationMode, type OpenDatabase } from '../database/open.js';
import { startHttpServer, type HttpServer } from '../http/server.js';
import { createLogger } from '../logger.js';
import { seedDemoData, type DemoData } from '../orgs/demo.js';
import { countOrgs } from '../orgs/service.js';
import { startWorkers, type BackgroundWorker } from '../workers.js';
import { parse, UsageError } from './args.js';
import { configOrExit, reported, wantsHelp } from './command.js';

const USAGE = `Usage: voice-call-api serve [--role api|worker|all] [--processes N]

  --role api       serve the HTTP API only
  --role worker    run call progress and webhook delivery only (no HTTP port)
  --role all       both (the default)
  --processes N    run N HTTP processes sharing the port (api and all roles; default 1)

Without DATABASE_URL an embedded PostgreSQL is started under DATA_DIR, with demo data on the first
start. Pending migrations are applied first unless MIGRATE_ON_START=false.
`;

/** Which parts of the service a process runs. */
export type Role = 'api' | 'worker' | 'all';

/** A message a cluster child sends its primary once it listens. */
interface ListeningMessage {
  listening: number | null;
}

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

/** The banner printed once the service runs: where it is and, the first time, how to begin. */
function printBanner(
  config: Config,
  start: {
    port: number | null;
    role: Role;
    processes: number;
    database: OpenDatabase;
    demo: DemoData | null;
    orgs: number;
  },
): void {
  const base = start.port === null ? null : config.publicBaseUrl.replace(/:\d+$/, `:${start.port}`);
  const processes = start.processes > 1 ? `, ${start.processes} HTTP processes` : '';
  const lines = ['', `  Voice-call API is running (role ${start.role}${processes}).`];
  if (base) lines.push(`  Base URL : ${base}/api/v1`, `  Docs     : ${base}/docs`);
  lines.push(`  Database : ${start.database.embedded ? `embedded PostgreSQL (${config.dataDir})` : 'DATABASE_URL'}`);
  const { demo } = start;
  if (demo?.apiKey && base) {
    lines.push(
      `  Demo org : ${demo.orgId} (agent ${demo.agentId})`,
      `  API key  : ${demo.apiKey}   (shown once; store it)`,
      '',
      '  Try it:',
      `  curl -s -X POST ${base}/api/v1/calls \\`,
      `    -H "Authorization: Bearer ${demo.apiKey}" -H "Content-Type: application/json" \\`,
      `    -d '{"agent_id":"${demo.agentId}","to_e164":"+919812345678"}'`,
    );
  } else if (demo) {
    lines.push(`  Demo org : ${demo.orgId}; a new key: voice-call-api admin key create --org ${demo.orgId}`);
  } else if (start.orgs === 0) {
    lines.push(
      '',
      '  The database has no organisation yet. Create one, an agent and an API key:',
      '    voice-call-api admin org create --name "Acme" --credits 500000',
      '    voice-call-api admin agent create --org ORG_ID --name "Priya"',
      '    voice-call-api admin key create --org ORG_ID',
      '  (from a checkout: npm run admin -- org create ...)',
    );
  }
  process.stdout.write(lines.join('\n') + '\n\n');
}

/** A running process of the service. */
interface Running {
  port: number | null;
  stop(signal: NodeJS.Signals): Promise<void>;
}

/** Starts this process's part of the service on an opened database. */
async function startParts(
  config: Config,
  database: OpenDatabase,
  parts: { http: boolean; background: boolean },
): Promise<Running & { deps: AppDeps }> {
  const logger = createLogger(config.logLevel);
  // The process works on the database actually opened (embedded when DATABASE_URL is unset).
  const deps = createAppDeps({ db: database.db, config: { ...config, databaseUrl: database.url }, logger });
  const server: HttpServer | null = parts.http
    ? await startHttpServer((await createApp(deps)).callback(), config, deps.readiness, logger)
    : null;
  const workers: BackgroundWorker[] = parts.background ? await startWorkers(deps) : [];
  return {
    deps,
    port: server?.port ?? null,
    stop: async (signal) => {
      logger.info({ signal }, 'shutting down');
      const timeoutMs = config.shutdownTimeoutMs;
      // An interactive Ctrl-C stops at once; a SIGTERM from an orchestrator drains first.
      await server?.shutdown({ drainMs: signal === 'SIGTERM' ? config.shutdownDrainMs : 0, timeoutMs });
      await Promise.all(workers.map((worker) => worker.stop(timeoutMs)));
      await closeAppDeps(deps);
      logger.info('stopped');
    },
  };
}

/** Resolves with the first of SIGTERM and SIGINT, once `stop` has run for it; later signals are ignored. */
function untilStopped(stop: (signal: NodeJS.Signals) => Promise<void>): Promise<number> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      stop(signal).then(() => resolve(0), reject);
    };
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    process.on('SIGINT', () => onSignal('SIGINT'));
  });
}

async function openForServing(config: Config) {
  return openDatabase(config, { migrations: startupMigrationMode(config), logger: createLogger(config.logLevel) });
}

/** A single process: the role's parts, the banner, then until a signal. */
async function runSingle(role: Role): Promise<number> {
  const startedAt = performance.now();
  const config = configOrExit();
  const database = await openForServing(config);
  const demo = database.embedded ? await seedDemoData(database.db) : null;
  const running = await startParts(config, database, { http: role !== 'worker', background: role !== 'api' });
  printBanner(config, { port: running.port, role, processes: 1, database, demo, orgs: await countOrgs(database.db) });
  running.deps.logger.info({ role, port: running.port, readyMs: Math.round(performance.now() - startedAt) }, 'started');
  return untilStopped(async (signal) => {
    await running.stop(signal);
    await database.close();
  });
}

/** A cluster child: one HTTP process on the shared port; tells the primary once it listens. */
async function runChild(): Promise<number> {
  const config = configOrExit();
  // The primary opened (and migrated) the database already.
  const database = await openDatabase(config, { migrations: 'ignore' });
  const running = await startParts(config, database, { http: true, background: false });
  process.send?.({ listening: running.port } satisfies ListeningMessage);
  return untilStopped(async (signal) => {
    await running.stop(signal);
    await database.close();
  });
}

/** The cluster primary: opens the database, forks the HTTP processes, runs the background work of the all role. */
async function runPrimary(role: Role, processes: number): Promise<number> {
  const config = configOrExit();
  const database = await openForServing(config);
  const demo = database.embedded ? await seedDemoData(database.db) : null;
  const background = role === 'all' ? await startParts(config, database, { http: false, background: true }) : null;
  cluster.setupPrimary({ args: ['serve', '--role', 'api'] });
  const children = Array.from({ length: processes }, () =>
    cluster.fork(database.embedded ? {} : { DATABASE_URL: database.url }),
  );
  const exited = children.map((child) => new Promise<void>((resolve) => child.once('exit', () => resolve())));
  const port = await new Promise<number | null>((resolve) =>
    children[0]!.once('message', (message: ListeningMessage) => resolve(message.listening)),
  );
  printBanner(config, { port, role, processes, database, demo, orgs: await countOrgs(database.db) });
  return untilStopped(async (signal) => {
    for (const child of children) if (!child.isDead()) child.process.kill(signal);
    await Promise.all(exited);
    await background?.stop(signal);
    await database.close();
  });
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
