// What every benchmark command shares: the seeded database, the service started exactly as `npm start`
// starts it, the two floor servers (prepared and unprepared) with the SQL captured from the service,
// autocannon runs against any of them, and clean-up on exit, interrupt or a watchdog.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { OpenDatabase } from '../../src/database/open.js';
import type { BaselinePlan, FloorStatements } from './baseline-server.js';
import { captureStatements } from './capture.js';
import { openBenchDatabase } from './database.js';
import { runLoad, type LoadResult } from './load.js';
import { cpuMs, startChild, type Child } from './processes.js';
import type { Scenario } from './scenarios.js';
import { seedBenchmark, type BenchFixture } from './seed.js';
import { captureWritePlan } from './write-plan.js';

/** Connections of each process's pool, the service's and the floor's. */
export const POOL_SIZE = 10;
/** Concurrent connections of the load generator. */
export const CONNECTIONS = 16;
/** Seconds of load before each measured run, thrown away. */
export const WARMUP_SEC = 2;
// The service's configuration: the production defaults, with logging at warn (one info line per
// request would be measured too), placed calls not progressing during the run (the simulator's
// first step comes 10 minutes after placement) and the loopback webhook receivers allowed.
export const SERVICE_SETTINGS = {
  LOG_LEVEL: 'warn',
  DB_POOL_SIZE: String(POOL_SIZE),
  VALIDATE_RESPONSES: 'false',
  API_KEY_CACHE_TTL_MS: '10000',
  SIMULATOR_STEP_MS: '600000',
  WEBHOOK_PRIVATE_ALLOWLIST: '127.0.0.0/8',
};
const SERVICE_READY = /Base URL : (http:\/\/[^\s/]+)\/api\/v1/;
const FLOOR_READY = /baseline \((?:un)?prepared\) listening on (http:\/\/\S+)/;

/** The words of package.json's start script after `[exec] node`; throws when it is not such a command. */
function startCommand(): { nodeArgs: string[]; script: string; args: string[] } {
  const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  const words = manifest.scripts.start!.trim().split(/\s+/);
  if (words[0] === 'exec') words.shift();
  if (words.shift() !== 'node' || words.length === 0)
    throw new Error(`npm start is not a plain "node …" command: ${manifest.scripts.start}`);
  const at = words.findIndex((word) => word.endsWith('.js'));
  return { nodeArgs: words.slice(0, at), script: words[at]!, args: words.slice(at + 1) };
}

/** Writes a progress line to stderr. */
export const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);

/** Runs a benchmark command's `main`, then exits: 0 when it resolved, 1 (after printing why) when it threw. */
export function runCommand(command: string, main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(`${command} failed:`, error);
      process.exit(1);
    },
  );
}

/** Polls GET /readyz until it answers 200; throws after `timeoutMs`. */
export async function waitReady(origin: string, timeoutMs: number): Promise<void> {
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

/** The value of `--name=value` (or '' for a bare `--name`) on the command line. */
export function option(name: string): string | undefined {
  const prefix = `--${name}=`;
  const found = process.argv.find((arg) => arg === `--${name}` || arg.startsWith(prefix));
  return found === undefined ? undefined : found.startsWith(prefix) ? found.slice(prefix.length) : '';
}

/**
 * The floors of one set of scenarios: `prepared` prepares the statements the service prepares (the fair
 * floor every ratio and target is taken against); `unprepared` sends the same SQL unprepared.
 */
export type Floors = Record<FloorStatements, Child>;

/** One benchmark command's resources; `close` releases all of them. */
export interface BenchSession {
  database: OpenDatabase;
  fixture: BenchFixture;
  /** A private temporary directory, removed on close. */
  temp: string;
  /** The service's environment (add NODE_EXTRA_CA_CERTS and the like before starting it). */
  serviceEnv: NodeJS.ProcessEnv;
  /**
   * Starts the service as `npm start` does, plus `args`, node flags and settings over `serviceEnv`;
   * resolves once /readyz is 200, or once its output matches `ready` when given (a process without an
   * HTTP port).
   */
  startService(options?: {
    args?: string[];
    nodeArgs?: string[];
    env?: NodeJS.ProcessEnv;
    ready?: RegExp;
  }): Promise<Child>;
  /**
   * Captures the SQL of the scenarios' floors and starts both floor servers, with npm start's node flags
   * plus `nodeArgs`.
   */
  startFloors(scenarios: Scenario[], options?: { nodeArgs?: string[] }): Promise<Floors>;
  /** A warm-up then a measured autocannon run against `server`. */
  load(
    server: Child,
    next: Scenario['service'],
    options: {
      seconds: number;
      warmupSec?: number;
      connections?: number;
      rate?: number;
      serverCpuMs?: () => number;
      latencies?: number[];
    },
  ): Promise<LoadResult>;
  close(): Promise<void>;
}

/**
 * Opens (and seeds, the first time) the benchmark database and arms a watchdog and signal handlers
 * that stop every child and the embedded PostgreSQL. Throws when the database cannot be opened.
 */
export async function openBenchSession(options: { watchdogMs: number }): Promise<BenchSession> {
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
    log(`still running after ${options.watchdogMs / 60_000} minutes; stopping the servers and giving up`);
    abandon(1);
  }, options.watchdogMs);
  watchdog.unref();
  process.once('SIGINT', () => abandon(130));
  process.once('SIGTERM', () => abandon(143));

  database = await openBenchDatabase(4);
  const opened = database;
  // The host and port only: the URL carries the embedded cluster's password.
  log(`database: ${process.env.DATABASE_URL ? 'DATABASE_URL' : `embedded PostgreSQL at ${new URL(opened.url).host}`}`);
  const fixture = await seedBenchmark(opened.db);
  log(
    fixture.seeded ? `seeded in ${(fixture.seedMs / 1000).toFixed(1)} s` : 'reusing the seeded data of an earlier run',
  );

  const { PUBLIC_BASE_URL: _ignored, ...inherited } = process.env;
  const serviceEnv: NodeJS.ProcessEnv = {
    ...inherited,
    ...SERVICE_SETTINGS,
    DATABASE_URL: opened.url,
    HOST: '127.0.0.1',
    PORT: '0',
    SHUTDOWN_TIMEOUT_MS: '2000',
  };
  const command = startCommand();
  return {
    database: opened,
    fixture,
    temp,
    serviceEnv,
    startService: async (extra = {}) => {
      const child = await startChild(command.script, {
        args: [...command.args, ...(extra.args ?? [])],
        env: { ...serviceEnv, ...extra.env },
        ready: extra.ready ?? SERVICE_READY,
        timeoutMs: 60_000,
        nodeArgs: [...command.nodeArgs, ...(extra.nodeArgs ?? [])],
      });
      children.push(child);
      if (!extra.ready) await waitReady(child.address, 10_000);
      return child;
    },
    startFloors: async (scenarios, options = {}) => {
      const plan: BaselinePlan = { databaseUrl: opened.url, poolSize: POOL_SIZE, routes: {}, writes: {} };
      for (const scenario of scenarios) {
        if (scenario.baseline) {
          plan.routes[scenario.name] = {
            plan: await captureStatements(opened.pool, scenario.baseline.capture),
            ...(scenario.baseline.idParameter ? { idParameter: scenario.baseline.idParameter } : {}),
          };
        }
        const writes = scenario.writeBaseline;
        if (writes) {
          const cases: BaselinePlan['writes'][string] = {};
          for (const [name, bodies] of Object.entries(writes.cases)) {
            cases[name] = await captureWritePlan(opened.pool, writes.write, bodies);
          }
          plan.writes[scenario.name] = cases;
        }
      }
      const planFile = path.join(temp, 'baseline-plan.json');
      writeFileSync(planFile, JSON.stringify(plan));
      // The floors run on the same V8 settings as the service (npm start's node flags).
      const startFloor = async (statements: FloorStatements) => {
        const child = await startChild('scripts/bench/baseline-server.ts', {
          args: [planFile, statements],
          nodeArgs: [...command.nodeArgs, ...(options.nodeArgs ?? [])],
          env: process.env,
          ready: FLOOR_READY,
          timeoutMs: 60_000,
        });
        children.push(child);
        return child;
      };
      return { prepared: await startFloor('prepared'), unprepared: await startFloor('unprepared') };
    },
    load: (server, next, run) =>
      runLoad({
        origin: server.address,
        next,
        connections: run.connections ?? CONNECTIONS,
        durationSec: run.seconds,
        warmupSec: run.warmupSec ?? WARMUP_SEC,
        ...(run.rate === undefined ? {} : { rate: run.rate }),
        serverCpuMs: run.serverCpuMs ?? (() => cpuMs(server.pid)),
        ...(run.latencies === undefined ? {} : { latencies: run.latencies }),
      }),
    close: async () => {
      clearTimeout(watchdog);
      await Promise.all(children.map((child) => child.stop()));
      await opened.close();
      rmSync(temp, { recursive: true, force: true });
    },
  };
}
