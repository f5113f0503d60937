// `npm run bench`: seeds the benchmark database, starts the real service and the bare baseline as child
// processes on loopback, runs every scenario, the webhook delivery test and the start-up and memory
// measurements, then prints the report and writes bench-report.json. Stops by itself (15-minute watchdog).
// Options: --duration=SECONDS (per measured run, default 10), --only=NAME,... (scenario names,
// `webhooks` or `scale-out`), --profile (CPU profile of the measured server in .data/bench-profiles).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../../src/database/connect.js';
import type { OpenDatabase } from '../../src/database/open.js';
import { makeLocalTls } from '../../src/tools/local-ca.js';
import type { BaselinePlan } from './baseline-server.js';
import { captureStatements } from './capture.js';
import { captureWritePlan } from './write-plan.js';
import { openBenchDatabase } from './database.js';
import { runLoad, type LoadResult } from './load.js';
import { cpuMs, rssMiB, sampleRss, startChild, type Child } from './processes.js';
import { startReceivers } from './receivers.js';
import { evaluateTargets, formatReport, median, type BenchReport, type ScenarioReport } from './report.js';
import { benchScaleOut, type ScaleOutRow } from './scale-out.js';
import { buildScenarios, type Scenario } from './scenarios.js';
import { seedBenchmark } from './seed.js';
import { benchWebhooks, HANGING_RECEIVER, RECEIVER_COUNT } from './webhooks.js';

const POOL_SIZE = 10;
const CONNECTIONS = 16;
const WARMUP_SEC = 2;
const BOOTS = 3;
const WATCHDOG_MS = 15 * 60_000;
// The service's configuration: the production defaults, with logging at warn (one info line per
// request would be measured too), placed calls not progressing during the run (the simulator's
// first step comes 10 minutes after placement) and the loopback webhook receivers allowed.
const SERVICE_SETTINGS = {
  LOG_LEVEL: 'warn',
  DB_POOL_SIZE: String(POOL_SIZE),
  VALIDATE_RESPONSES: 'false',
  API_KEY_CACHE_TTL_MS: '10000',
  SIMULATOR_STEP_MS: '600000',
  WEBHOOK_PRIVATE_ALLOWLIST: '127.0.0.0/8',
};
// The service exactly as `npm start` runs it (`exec node [flags] dist/src/main.js serve`, the build that
// `npm run bench` makes first): its node flags, script and arguments are read from package.json.
const START_WORDS = startCommand();
const SCRIPT_AT = START_WORDS.findIndex((word) => word.endsWith('.js'));
const SERVICE_NODE_ARGS = START_WORDS.slice(0, SCRIPT_AT);
const SERVICE_SCRIPT = START_WORDS[SCRIPT_AT]!;
const SERVICE_ARGS = START_WORDS.slice(SCRIPT_AT + 1);
const SERVICE_READY = /Base URL : (http:\/\/[^\s/]+)\/api\/v1/;
const BASELINE_READY = /baseline listening on (http:\/\/\S+)/;

/** The words of package.json's start script after `[exec] node`; throws when it is not such a command. */
function startCommand(): string[] {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const words = manifest.scripts.start!.trim().split(/\s+/);
  if (words[0] === 'exec') words.shift();
  if (words.shift() !== 'node' || words.length === 0)
    throw new Error(`npm start is not a plain "node …" command: ${manifest.scripts.start}`);
  return words;
}

function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  const found = process.argv.find((arg) => arg === `--${name}` || arg.startsWith(prefix));
  return found === undefined ? undefined : found.startsWith(prefix) ? found.slice(prefix.length) : '';
}

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

const describe = (result: LoadResult) =>
  `${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
  `${result.errors} errors, ${(result.serverCpuMsPerRequest * 1000).toFixed(0)} us CPU/req`;

/** Polls GET /readyz until it answers 200. */
async function waitReady(origin: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(`${origin}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${origin}/readyz did not answer 200 within ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** Waits until the call-progress worker has no due calls left (calls placed by POST /calls get one step). */
async function waitForCallWorker(db: Db, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { rows } = await sql<{
      due: number;
    }>`SELECT count(*)::int AS due FROM calls WHERE next_step_at <= now()`.execute(db);
    if (rows[0]!.due === 0) return;
    await sleep(250);
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = os.loadavg()[0]!;
  const durationSec = Number(option('duration') ?? 10);
  const only = option('only')?.split(',').filter(Boolean);
  const profile = option('profile') !== undefined;
  const wanted = (name: string) => !only || only.includes(name);
  const children: Child[] = [];
  const temp = mkdtempSync(path.join(os.tmpdir(), 'voice-bench-'));
  let database: OpenDatabase | null = null;
  // On the watchdog or an interrupt: the servers and the embedded PostgreSQL go with the benchmark.
  const abandon = (code: number) => {
    for (const child of children) child.kill();
    rmSync(temp, { recursive: true, force: true });
    void Promise.resolve(database?.close()).finally(() => process.exit(code));
  };
  const watchdog = setTimeout(() => {
    log(`still running after ${WATCHDOG_MS / 60_000} minutes; stopping the servers and giving up`);
    abandon(1);
  }, WATCHDOG_MS);
  watchdog.unref();
  process.once('SIGINT', () => abandon(130));
  process.once('SIGTERM', () => abandon(143));

  database = await openBenchDatabase(4);
  try {
    // The host and port only: the URL carries the embedded cluster's password.
    log(
      `database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : `embedded PostgreSQL at ${new URL(database.url).host}`}`,
    );
    const fixture = await seedBenchmark(database.db);
    log(
      fixture.seeded
        ? `seeded in ${(fixture.seedMs / 1000).toFixed(1)} s`
        : 'reusing the seeded data of an earlier run',
    );

    const tls = await makeLocalTls({ caName: 'Benchmark webhook CA' });
    const caFile = path.join(temp, 'ca.pem');
    writeFileSync(caFile, tls.caCert);
    const farm = await startReceivers(tls, RECEIVER_COUNT, new Set([HANGING_RECEIVER]));

    const allScenarios = buildScenarios(fixture, Math.floor(Date.now() / 1000) % 100_000);
    const scenarios = allScenarios.filter((s) => wanted(s.name));
    const plan: BaselinePlan = { databaseUrl: database.url, poolSize: POOL_SIZE, routes: {}, writes: {} };
    for (const scenario of scenarios) {
      if (scenario.baseline) {
        plan.routes[scenario.name] = {
          plan: await captureStatements(database.pool, scenario.baseline.capture),
          ...(scenario.baseline.idParameter ? { idParameter: scenario.baseline.idParameter } : {}),
        };
      }
      const writes = scenario.writeBaseline;
      if (writes) {
        plan.writes[scenario.name] = {};
        for (const [name, bodies] of Object.entries(writes.cases)) {
          plan.writes[scenario.name]![name] = await captureWritePlan(database.pool, writes.write, bodies);
        }
      }
    }
    const planFile = path.join(temp, 'baseline-plan.json');
    writeFileSync(planFile, JSON.stringify(plan));

    const { PUBLIC_BASE_URL: _ignored, ...inherited } = process.env;
    const serviceEnv = {
      ...inherited,
      ...SERVICE_SETTINGS,
      DATABASE_URL: database.url,
      HOST: '127.0.0.1',
      PORT: '0',
      NODE_EXTRA_CA_CERTS: caFile,
      SHUTDOWN_TIMEOUT_MS: '2000',
    };
    const readyMs: number[] = [];
    let service: Child | null = null;
    for (let boot = 1; boot <= BOOTS; boot += 1) {
      const t0 = performance.now();
      const child = await startChild(SERVICE_SCRIPT, {
        args: SERVICE_ARGS,
        env: serviceEnv,
        ready: SERVICE_READY,
        timeoutMs: 60_000,
        nodeArgs: [
          ...SERVICE_NODE_ARGS,
          ...(profile && boot === BOOTS ? ['--cpu-prof', '--cpu-prof-dir', path.resolve('.data/bench-profiles')] : []),
        ],
      });
      children.push(child);
      await waitReady(child.address, 10_000);
      readyMs.push(performance.now() - t0);
      if (boot < BOOTS) await child.stop();
      else service = child;
    }
    log(`service ready in ${readyMs.map((v) => v.toFixed(0)).join(', ')} ms at ${service!.address}`);
    const baseline = await startChild('scripts/bench/baseline-server.ts', {
      args: [planFile],
      env: process.env,
      ready: BASELINE_READY,
      timeoutMs: 60_000,
    });
    children.push(baseline);
    const idleRssMiB = rssMiB(service!.pid) ?? NaN;
    const rss = sampleRss(service!.pid);

    const results: ScenarioReport[] = [];
    const load = (
      server: Child,
      next: Scenario['service'],
      seconds = durationSec,
      warmupSec = WARMUP_SEC,
      serverCpuMs = () => cpuMs(server.pid),
    ): Promise<LoadResult> =>
      runLoad({ origin: server.address, next, connections: CONNECTIONS, durationSec: seconds, warmupSec, serverCpuMs });
    // An untimed round over every scenario first, so the first measured ones do not pay for JIT
    // compilation and cold caches in both servers.
    for (const scenario of scenarios) {
      await load(service!, scenario.service, WARMUP_SEC, 0);
      const floor = scenario.baseline ?? scenario.writeBaseline;
      if (floor) await load(baseline, floor.next, WARMUP_SEC, 0);
    }
    for (const scenario of scenarios) {
      const scenarioRss = sampleRss(service!.pid);
      const measured = await load(service!, scenario.service);
      const report: ScenarioReport = {
        name: scenario.name,
        title: scenario.title,
        kind: scenario.writeBaseline ? 'write' : 'read',
        service: measured,
        serviceRssMiB: scenarioRss.stop(),
      };
      log(`${scenario.name}: ${describe(report.service)}, peak RSS ${report.serviceRssMiB.toFixed(0)} MiB`);
      const floor = scenario.baseline ?? scenario.writeBaseline;
      if (floor) {
        report.baseline = await load(baseline, floor.next);
        log(`${scenario.name} floor: ${describe(report.baseline)}`);
      }
      results.push(report);
    }
    await waitForCallWorker(database.db, 60_000);

    let webhooks: BenchReport['webhooks'] = null;
    if (wanted('webhooks')) {
      const phaseRss = sampleRss(service!.pid);
      const delivery = await benchWebhooks({
        db: database.db,
        origin: service!.address,
        orgs: fixture.hooks,
        farm,
        steadySeconds: durationSec * 2,
        backlogPerOrg: 300,
      });
      webhooks = { ...delivery, serviceRssMiB: phaseRss.stop() };
      log(
        `webhooks: ${webhooks.backlog.perSecond.toFixed(0)} deliveries/s, p99 ${webhooks.withHanging.p99.toFixed(1)} ms, peak RSS ${webhooks.serviceRssMiB.toFixed(0)} MiB`,
      );
    }
    const peakRssMiB = rss.stop();
    await farm.close();
    await service!.stop();
    await baseline.stop();

    // Last, with nothing else of the benchmark running: 1, 2 and 4 API-only processes.
    let scaleOut: ScaleOutRow[] | null = null;
    if (wanted('scale-out')) {
      scaleOut = await benchScaleOut({
        scenarios: allScenarios,
        start: async (processes) => {
          const child = await startChild(SERVICE_SCRIPT, {
            args: [...SERVICE_ARGS, '--role', 'api', '--processes', String(processes)],
            env: serviceEnv,
            ready: SERVICE_READY,
            timeoutMs: 60_000,
            nodeArgs: SERVICE_NODE_ARGS,
          });
          children.push(child);
          await waitReady(child.address, 10_000);
          return child;
        },
        load: (server, next, serverCpuMs) => load(server, next, durationSec, WARMUP_SEC, serverCpuMs),
        log,
      });
    }

    const { rows } = await sql<{ server_version: string }>`SHOW server_version`.execute(database.db);
    const cpus = os.cpus();
    const partial: Omit<BenchReport, 'targets'> = {
      date: new Date().toISOString(),
      machine: {
        cpu: cpus[0]?.model ?? 'unknown',
        cores: cpus.length,
        memoryGiB: Math.round(os.totalmem() / 2 ** 30),
        os: `${os.type()} ${os.release()}`,
        node: process.versions.node,
        postgres: rows[0]!.server_version,
      },
      loadAverage: { start: loadAtStart, end: os.loadavg()[0]! },
      settings: {
        connections: CONNECTIONS,
        durationSec,
        warmupSec: WARMUP_SEC,
        ...SERVICE_SETTINGS,
        database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded',
      },
      seed: { seeded: fixture.seeded, seconds: fixture.seedMs / 1000 },
      scenarios: results,
      webhooks,
      scaleOut,
      startup: { readyMs, medianMs: median(readyMs) },
      memory: { idleRssMiB, peakRssMiB },
      totalSeconds: (performance.now() - started) / 1000,
    };
    const report: BenchReport = { ...partial, targets: evaluateTargets(partial) };
    process.stdout.write(`${formatReport(report)}\n`);
    writeFileSync('bench-report.json', `${JSON.stringify(report, null, 2)}\n`);
    log(`done in ${report.totalSeconds.toFixed(0)} s; wrote bench-report.json`);
  } finally {
    await Promise.all(children.map((child) => child.stop()));
    await database.close();
    rmSync(temp, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('bench failed:', error);
    process.exit(1);
  },
);
