// The service as a real process (`node dist/src/main.js serve`, the build `npm start` runs), for fault,
// secrets and soak tests: its own environment, its output captured, killed with any signal, its
// memory read on demand (test/support/heap-probe.ts).
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnReady } from './child-process.js';
import { testTls } from './webhook-receiver.js';

/** A running server process. */
export interface ServerProcess {
  pid: number;
  baseUrl: string;
  apiUrl: string;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Whether it is still running. */
  running(): boolean;
  /** Sends `signal` and waits until the process has exited. */
  stop(signal: NodeJS.Signals): Promise<void>;
  /** Settles with its exit code (null when a signal ended it) once it has exited. */
  exited: Promise<number | null>;
  /** The V8 heap in use after a full garbage collection, and the resident set size, in bytes. */
  memory(): Promise<{ heapUsed: number; rss: number }>;
}

const running = new Set<ChildProcess>();
const caFile = path.join(tmpdir(), `webhook-test-ca-${process.pid}.pem`);

/** SIGKILLs every server process still running and removes the CA file (for afterAll). */
export function killServerProcesses(): void {
  for (const child of running) child.kill('SIGKILL');
  rmSync(caFile, { force: true });
}

/**
 * The environment for a server on `databaseUrl` that delivers webhooks to loopback receivers using the
 * test CA: the allowlist and NODE_EXTRA_CA_CERTS a private installation would set.
 */
export async function serverEnvironment(
  databaseUrl: string,
  extra: Record<string, string> = {},
): Promise<Record<string, string>> {
  await writeFile(caFile, (await testTls()).caCert);
  return {
    DATABASE_URL: databaseUrl,
    PORT: '0',
    HOST: '127.0.0.1',
    WEBHOOK_PRIVATE_ALLOWLIST: '127.0.0.0/8',
    NODE_EXTRA_CA_CERTS: caFile,
    SHUTDOWN_TIMEOUT_MS: '2000',
    // Tests share a busy machine with their runner: background work keeps the usual CPU priority here
    // (roles.test.ts checks WORKER_NICE).
    WORKER_NICE: '0',
    ...extra,
  };
}

/**
 * Starts `dist/src/main.js serve [args]` with `env` (on top of this process's, minus any DATABASE_URL) and
 * `nodeFlags` for node itself, and resolves once it runs: once it listens, or, for `--role worker` (no
 * HTTP port), once its banner says it is running (baseUrl is then empty).
 */
export async function startServerProcess(
  env: Record<string, string>,
  timeoutMs = 60_000,
  args: string[] = [],
  nodeFlags: string[] = [],
): Promise<ServerProcess> {
  const inherited = { ...process.env };
  delete inherited.DATABASE_URL;
  delete inherited.TEST_DATABASE_URL;
  const ready = await spawnReady(
    process.execPath,
    [...nodeFlags, '--expose-gc', '--import', './test/support/heap-probe.ts', 'dist/src/main.js', 'serve', ...args],
    {
      env: { ...inherited, ...env },
      // The start-up banner, printed once the server runs, whatever LOG_LEVEL says.
      ready: args.includes('worker')
        ? /Voice-call API is running \(role worker\)()/
        : /Base URL : http:\/\/[^\s]+:(\d+)\/api\/v1/,
      timeoutMs,
      name: 'the server',
    },
  );
  const child = ready.process;
  running.add(child);
  void ready.exited.then(() => running.delete(child));
  const probes: Array<(line: string) => void> = [];
  let scanned = 0;
  // heap-probe answers on stderr; the lines are read from the output the child keeps.
  const scan = () => {
    const output = ready.output();
    const end = output.lastIndexOf('\n') + 1;
    for (const line of output.slice(scanned, end).split('\n'))
      if (line.startsWith('heap-probe ')) probes.shift()?.(line);
    scanned = Math.max(scanned, end);
  };
  child.stdout!.on('data', scan);
  child.stderr!.on('data', scan);
  const baseUrl = ready.match[1] ? `http://127.0.0.1:${ready.match[1]}` : '';
  return {
    pid: child.pid!,
    baseUrl,
    apiUrl: `${baseUrl}/api/v1`,
    output: ready.output,
    running: () => child.exitCode === null && child.signalCode === null,
    exited: ready.exited,
    stop: async (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await ready.exited;
    },
    memory: () =>
      new Promise((resolve) => {
        probes.push((line) =>
          resolve(JSON.parse(line.slice('heap-probe '.length)) as { heapUsed: number; rss: number }),
        );
        child.kill('SIGUSR2');
      }),
  };
}
