// One closed-loop load run with autocannon: a warm-up that is thrown away, then the measured run.
// Latencies are taken from autocannon's per-response times (sub-millisecond), not its 1 ms histogram.
import autocannon from 'autocannon';
import { postgresCpuByProcess, postgresCpuMsSince } from './processes.js';

/** One request to send; called for every request, so paths and bodies can vary. */
export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** How to load a server: where, with what, how hard and for how long. */
export interface LoadOptions {
  /** The server's origin, e.g. http://127.0.0.1:3000. */
  origin: string;
  next: () => RequestSpec;
  connections: number;
  durationSec: number;
  warmupSec: number;
  /** Requests a second over all connections; as fast as answered when unset. */
  rate?: number;
  /** The server process's CPU time so far in ms, read around the measured run. */
  serverCpuMs: () => number;
  /** When given, the measured run's 2xx latencies (ms) are appended to it, to pool runs (pooledLoad). */
  latencies?: number[];
}

/** What a run measured: throughput, latency percentiles of 2xx answers (ms) and failures. */
export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** Connection errors (timeouts included) and non-2xx answers. */
  errors: number;
  statusCodes: Record<string, number>;
  /** CPU time the server process spent per request (ms), from its user + system time. */
  serverCpuMsPerRequest: number;
  /** CPU time PostgreSQL's processes spent per request (ms) during the run, from theirs. */
  databaseCpuMsPerRequest: number;
}

/** The p-th percentile (0..100) of ascending values, nearest rank. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

/** Called for each answer: its status and its latency in ms. */
type OnResponse = (statusCode: number, responseTime: number) => void;

function start(
  options: Omit<LoadOptions, 'warmupSec' | 'serverCpuMs'>,
  durationSec: number,
  onResponse: OnResponse | null,
): { done: Promise<autocannon.Result>; stop: () => void } {
  let instance: autocannon.Instance | undefined;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    instance = autocannon(
      {
        url: options.origin,
        connections: options.connections,
        duration: durationSec,
        timeout: 10,
        ...(options.rate === undefined ? {} : { overallRate: options.rate }),
        requests: [{ setupRequest: (request) => ({ ...request, ...options.next() }) }],
      },
      (error: unknown, result) =>
        error
          ? reject(error instanceof Error ? error : new Error('autocannon failed', { cause: error }))
          : resolve(result),
    );
    if (onResponse) {
      instance.on('response', (_client, statusCode, _bytes, responseTime) => onResponse(statusCode, responseTime));
    }
  });
  return { done, stop: () => instance?.stop() };
}

function fire(options: LoadOptions, durationSec: number, latencies: number[] | null): Promise<autocannon.Result> {
  const collect: OnResponse | null = latencies
    ? (statusCode, responseTime) => {
        if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
      }
    : null;
  return start(options, durationSec, collect).done;
}

/** A 2xx answer of a probe: when its request was sent (epoch ms) and its latency (ms). */
export interface ProbeSample {
  sentAt: number;
  ms: number;
}

/** A load left running until stopped, keeping every answer's time and latency. */
export interface Probe {
  /** Stops sending; resolves with the 2xx answers' samples and the count of everything else. */
  stop(): Promise<{ samples: ProbeSample[]; failures: number }>;
}

/** Starts sending `options.next()` at `options.rate` a second (at most MAX_PROBE_SEC) until stopped. */
export function startProbe(options: Omit<LoadOptions, 'warmupSec' | 'serverCpuMs' | 'durationSec'>): Probe {
  const samples: ProbeSample[] = [];
  let failures = 0;
  const run = start({ ...options, durationSec: MAX_PROBE_SEC }, MAX_PROBE_SEC, (statusCode, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) samples.push({ sentAt: Date.now() - responseTime, ms: responseTime });
    else failures += 1;
  });
  return {
    stop: async () => {
      run.stop();
      const result = await run.done;
      return { samples, failures: failures + result.errors };
    },
  };
}

/** The longest a probe runs when nobody stops it. */
const MAX_PROBE_SEC = 600;

/** Runs the warm-up and the measured run; resolves with the measured run's numbers. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.warmupSec > 0) await fire(options, options.warmupSec, null);
  const latencies: number[] = [];
  const cpuBefore = options.serverCpuMs();
  const databaseBefore = postgresCpuByProcess();
  const result = await fire(options, options.durationSec, latencies);
  const cpu = options.serverCpuMs() - cpuBefore;
  const databaseCpu = postgresCpuMsSince(databaseBefore);
  for (const latency of latencies) options.latencies?.push(latency);
  const sorted = Float64Array.from(latencies).sort();
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = count ?? 0;
  return {
    requests: result.requests.total,
    rps: result.requests.total / options.durationSec,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errors: result.errors + result.non2xx,
    statusCodes,
    serverCpuMsPerRequest: cpu / Math.max(1, result.requests.total),
    databaseCpuMsPerRequest: databaseCpu / Math.max(1, result.requests.total),
  };
}

/** Measured runs as one: counts summed, rates and CPU per request weighted by requests, percentiles over `latencies` (all their 2xx answers). */
export function pooledLoad(runs: LoadResult[], latencies: number[]): LoadResult {
  const requests = runs.reduce((sum, run) => sum + run.requests, 0);
  const weighted = (pick: (run: LoadResult) => number) =>
    runs.reduce((sum, run) => sum + pick(run) * run.requests, 0) / Math.max(1, requests);
  const statusCodes: Record<string, number> = {};
  for (const run of runs) {
    for (const [code, count] of Object.entries(run.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  }
  const sorted = Float64Array.from(latencies).sort();
  return {
    requests,
    rps: requests / runs.reduce((sum, run) => sum + run.requests / Math.max(run.rps, Number.MIN_VALUE), 0),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
    statusCodes,
    serverCpuMsPerRequest: weighted((run) => run.serverCpuMsPerRequest),
    databaseCpuMsPerRequest: weighted((run) => run.databaseCpuMsPerRequest),
  };
}
