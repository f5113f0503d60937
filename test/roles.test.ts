// Roles and scale-out: an API-only process never delivers, and two worker-only processes sharing the
// database deliver every event to every endpoint exactly once, with exactly one attempt each. With
// --processes N the primary replaces a child that dies or hangs at start, its /readyz says when no child
// can serve, and a child that keeps dying stops the service with exit status 1. A process that runs
// only background work lowers its CPU priority to WORKER_NICE; one that serves HTTP never does.
import { readdirSync, readFileSync } from 'node:fs';
import { get as httpGet } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrg, type TestOrg } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { freePort } from './support/own-postgres.js';
import {
  killServerProcesses,
  serverEnvironment,
  startServerProcess,
  type ServerProcess,
} from './support/server-process.js';
import { answer, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { parseJson } from './support/json.js';

// At most the 100 attempts each endpoint's log keeps, so every attempt can be checked.
const EVENTS = 100;

let database: TestDatabase;
let org: TestOrg;
let api: ServerProcess;
const receivers: Receiver[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  org = await createTestOrg(database.db, { planId: 'scale' });
  api = await startServerProcess(await serverEnvironment(database.url, { LOG_LEVEL: 'warn' }), 60_000, [
    '--role',
    'api',
  ]);
}, 120_000);

afterAll(async () => {
  killServerProcesses();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await database?.drop();
});

describe('one API process and two worker processes', () => {
  it('deliver every event exactly once, with no attempt made twice', { timeout: 240_000 }, async () => {
    const headers = { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' };
    const endpoints: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      const receiver = await startReceiver(answer(200));
      receivers.push(receiver);
      const created = await fetch(`${api.apiUrl}/webhooks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ url: receiver.url, events: ['contact.created'] }),
      });
      expect(created.status).toBe(201);
      endpoints.push(((await created.json()) as { data: { id: string } }).data.id);
    }
    for (let i = 0; i < EVENTS; i += 1) {
      const upserted = await fetch(`${api.apiUrl}/contacts`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ phone_e164: testNumber(String(1000 + i)), consent_capture: 'manual' }),
      });
      expect(upserted.status).toBe(201);
    }
    // The API process has no delivery worker: nothing goes out yet.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(receivers.every((receiver) => receiver.requests.length === 0)).toBe(true);

    const env = await serverEnvironment(database.url, { LOG_LEVEL: 'warn' });
    await Promise.all([
      startServerProcess(env, 60_000, ['--role', 'worker']),
      startServerProcess(env, 60_000, ['--role', 'worker']),
    ]);
    for (const receiver of receivers) await receiver.waitFor(EVENTS, 60_000);
    await waitFor(
      'every delivery to be recorded',
      async () =>
        (await database.db
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('status', '<>', 'succeeded')
          .executeTakeFirst()) === undefined,
      20_000,
    );
    // Wait a little for any late duplicate.
    await new Promise((resolve) => setTimeout(resolve, 1_000));

    for (const receiver of receivers) {
      const eventIds = receiver.requests.map((request) => parseJson<{ id: string }>(request.rawBody).id);
      expect(eventIds).toHaveLength(EVENTS);
      expect(new Set(eventIds).size).toBe(EVENTS);
    }
    const deliveries = await database.db.selectFrom('webhook_deliveries').select(['id', 'attempt_count']).execute();
    expect(deliveries).toHaveLength(EVENTS * endpoints.length);
    expect(deliveries.every((delivery) => delivery.attempt_count === 1)).toBe(true);
    const attempts = await database.db.selectFrom('webhook_attempts').select('delivery_id').execute();
    expect(attempts).toHaveLength(EVENTS * endpoints.length);
    expect(new Set(attempts.map((attempt) => attempt.delivery_id)).size).toBe(attempts.length);
  });
});

/**
 * Starts `serve --role <role> --processes 2` with its metrics and its API on free ports below the
 * ephemeral range (see freePort), logging at info unless `env` says otherwise.
 */
async function startPrimary(
  role: 'api' | 'all',
  env: Record<string, string> = {},
): Promise<{ primary: ServerProcess; metricsPort: number }> {
  const metricsPort = await freePort();
  let apiPort = await freePort();
  while (apiPort === metricsPort) apiPort = await freePort();
  const primary = await startServerProcess(
    await serverEnvironment(database.url, {
      LOG_LEVEL: 'info',
      METRICS_PORT: String(metricsPort),
      PORT: String(apiPort),
      ...env,
    }),
    60_000,
    ['--role', role, '--processes', '2'],
  );
  return { primary, metricsPort };
}

/** The names of the series in a Prometheus text, from its TYPE lines. */
function seriesNames(metrics: string): string[] {
  return [...metrics.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]!);
}

/** The series only an API process exports, and those only a worker exports. */
const API_SERIES = [
  'voice_call_http_request_duration_seconds',
  'voice_call_http_requests_in_flight',
  'voice_call_rate_limit_rejections_total',
];
const WORKER_SERIES = [
  'voice_call_webhook_queue_depth',
  'voice_call_webhook_queue_oldest_due_age_seconds',
  'voice_call_webhook_deliveries_abandoned_total',
  'voice_call_webhook_event_to_first_attempt_seconds',
  'voice_call_retention_deleted_rows_total',
  'voice_call_retention_last_success_timestamp_seconds',
  'voice_call_jobs_completed_total',
  'voice_call_jobs_failed_total',
  'voice_call_jobs_retried_total',
  'voice_call_job_queue_depth',
];

describe('an API served by two processes', () => {
  it(
    'shares one port and reports the metrics of both on METRICS_PORT, API series only',
    { timeout: 120_000 },
    async () => {
      const { primary: cluster, metricsPort } = await startPrimary('api', { LOG_LEVEL: 'warn' });
      const headers = { Authorization: `Bearer ${org.key}` };
      for (let i = 0; i < 20; i += 1)
        expect((await fetch(`${cluster.apiUrl}/calls?limit=1`, { headers })).status).toBe(200);
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(listCallsServed(metrics)).toBe(20);
      const names = seriesNames(metrics);
      for (const name of API_SERIES) expect(names, name).toContain(name);
      for (const name of WORKER_SERIES) expect(names, name).not.toContain(name);
      // Every series the service defines carries its prefix; Node's own keep their usual names.
      expect(names.filter((name) => !/^(voice_call_|process_|nodejs_)/.test(name))).toEqual([]);
      // The primary runs no worker child, so it reports none missing.
      expect(metrics).toMatch(/^voice_call_child_processes_up\{role="api"\} 2$/m);
      expect(metrics).not.toContain('role="worker"');
      await cluster.stop('SIGTERM');
    },
  );

  it(
    'keeps counting what a replaced child counted, and serves a stopped child as it last answered',
    { timeout: 120_000 },
    async () => {
      const { primary, metricsPort } = await startPrimary('api', { LOG_LEVEL: 'warn' });
      const scrape = async () => {
        const answer = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
        expect(answer.status).toBe(200);
        return answer.text();
      };
      try {
        const headers = { Authorization: `Bearer ${org.key}` };
        // The primary hands each new connection to the next child, so both serve half of these.
        for (let i = 0; i < 20; i += 1)
          expect(await statusOnNewConnection(`${primary.apiUrl}/calls?limit=1`, headers)).toBe(200);
        expect(listCallsServed(await scrape())).toBe(20);

        // A child that does not answer (stopped) is served with its last answer, not dropped or waited for.
        const [first, second] = clusterChildPids(primary.pid, 'api');
        process.kill(second!, 'SIGSTOP');
        try {
          expect(listCallsServed(await scrape())).toBe(20);
        } finally {
          process.kill(second!, 'SIGCONT');
        }

        // A child killed and replaced leaves its counts behind: the sum never goes down.
        process.kill(first!, 'SIGKILL');
        await waitForApiChildren(metricsPort, 1);
        const after = await scrape();
        expect(listCallsServed(after)).toBe(20);
        // Gauges are not kept: the replaced child's requests in flight are not counted on.
        expect(after).toMatch(/^voice_call_http_requests_in_flight 0$/m);
        await primary.stop('SIGTERM');
      } finally {
        if (primary.running()) await primary.stop('SIGKILL');
      }
    },
  );
});

/** The status of a GET of `url` sent on a connection of its own. */
function statusOnNewConnection(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers, agent: false }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode!));
    }).on('error', reject);
  });
}

/** How many `GET /calls` requests a Prometheus text counts, over every status. */
function listCallsServed(metrics: string): number {
  return metrics
    .split('\n')
    .filter(
      (line) =>
        line.startsWith('voice_call_http_request_duration_seconds_count{') && line.includes('operation="listCalls"'),
    )
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

describe('a worker process', () => {
  it('exports the background series, with known labels at 0, and none of the API', { timeout: 120_000 }, async () => {
    const metricsPort = await freePort();
    // WORKER_NICE at its default.
    const worker = await startServerProcess(
      await serverEnvironment(database.url, { LOG_LEVEL: 'warn', METRICS_PORT: String(metricsPort), WORKER_NICE: '' }),
      60_000,
      ['--role', 'worker'],
    );
    // Background work yields the CPU to request serving; the API process keeps the usual priority.
    expect(niceOf(worker.pid)).toBe(10);
    expect(niceOf(api.pid)).toBe(0);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const names = seriesNames(metrics);
    for (const name of WORKER_SERIES) expect(names, name).toContain(name);
    for (const name of API_SERIES) expect(names, name).not.toContain(name);
    for (const sample of [
      'voice_call_webhook_attempts_total{outcome="success"} 0',
      'voice_call_webhook_attempts_total{outcome="timeout"} 0',
      'voice_call_call_status_changes_total{from="ringing",to="in_progress"} 0',
      'voice_call_retention_deleted_rows_total{table="webhook_deliveries"} 0',
    ]) {
      expect(metrics, sample).toContain(sample);
    }
    await worker.stop('SIGTERM');
  });
});

/** The nice value of process `pid`'s main thread (the 19th field of /proc/PID/stat). */
function niceOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command name, which is in parentheses and may hold spaces: state is field 3.
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
}

/**
 * The pids of the live cluster children of `pid` (read from /proc). Only processes that have already
 * exec'd node as a cluster worker count (their environment holds NODE_UNIQUE_ID): a fork not yet exec'd
 * is a copy of the primary, and stopping it would block the primary inside its spawn call for good. Any
 * other child is left out too. With `role`, only children of that role.
 */
function clusterChildPids(pid: number, role?: 'api' | 'worker'): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(parent) !== pid || state === 'Z') continue;
      const environment = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
      if (!environment.some((line) => line.startsWith('NODE_UNIQUE_ID='))) continue;
      if (role && !environment.includes(`VOICE_CALL_API_CHILD_ROLE=${role}`)) continue;
      children.push(Number(entry));
    } catch {
      // The process ended while the list was read.
    }
  }
  return children;
}

/** The status /readyz answers on `port`, or 0 when nothing answers. */
async function readyStatus(port: number): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`)).status;
  } catch {
    return 0;
  }
}

/**
 * Waits until the primary's /metrics counts `restarts` api children replaced and two up. Until a new
 * child answers the primary's request for its metrics, /metrics may fail for a moment.
 */
function waitForApiChildren(metricsPort: number, restarts: number): Promise<boolean> {
  return waitFor(
    `/metrics to count ${restarts} restart(s) and two children up`,
    async () => {
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      return (
        new RegExp(`^voice_call_child_process_restarts_total\\{role="api"\\} ${restarts}$`, 'm').test(metrics) &&
        /^voice_call_child_processes_up\{role="api"\} 2$/m.test(metrics)
      );
    },
    // A new child starts slowly on a machine busy with the rest of the suite.
    60_000,
  );
}

describe('the primary of serve --processes', () => {
  it(
    'with --role all, says not ready while its background child is down, and replaces it',
    { timeout: 180_000 },
    async () => {
      const { primary, metricsPort } = await startPrimary('all', { WORKER_NICE: '5' });
      try {
        // The banner waited for the background child to report that its work runs.
        const apiChildren = clusterChildPids(primary.pid, 'api');
        expect(apiChildren).toHaveLength(2);
        const [background] = clusterChildPids(primary.pid, 'worker');
        expect(background).toBeDefined();
        // Only the background child yields the CPU; the HTTP children and the primary do not.
        expect(niceOf(background!)).toBe(5);
        expect([primary.pid, ...apiChildren].map(niceOf)).toEqual([0, 0, 0]);
        expect(await readyStatus(metricsPort)).toBe(200);

        process.kill(background!, 'SIGKILL');
        await waitFor('/readyz to answer 503 naming the background child', async () => {
          const ready = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
          const body = (await ready.json()) as { reason?: string };
          return (
            ready.status === 503 &&
            body.reason === 'background_process_down' &&
            ready.headers.get('retry-after') === '1'
          );
        });
        await waitFor('/readyz to answer 200 again', async () => (await readyStatus(metricsPort)) === 200, 60_000);
        const [replacement] = clusterChildPids(primary.pid, 'worker');
        expect(replacement).not.toBe(background);
        await primary.stop('SIGTERM');
        expect(await primary.exited).toBe(0);
      } finally {
        if (primary.running()) await primary.stop('SIGKILL');
      }
    },
  );

  it('kills a child that does not start in time, and starts another', { timeout: 180_000 }, async () => {
    // Far above a child's start (on a machine busy with the rest of the suite).
    const { primary, metricsPort } = await startPrimary('api', { CHILD_START_TIMEOUT_MS: '10000' });
    try {
      const first = clusterChildPids(primary.pid);
      process.kill(first[0]!, 'SIGKILL');
      // Its replacement is stopped as soon as it exists, long before it could listen: it hangs at start.
      const stuck = await waitFor(
        'a replacement child',
        () => {
          const fresh = clusterChildPids(primary.pid).find((pid) => !first.includes(pid));
          if (fresh) process.kill(fresh, 'SIGSTOP');
          return fresh;
        },
        20_000,
      );
      await waitFor(
        'the stuck child to be killed and replaced',
        () => {
          const now = clusterChildPids(primary.pid);
          return now.length === 2 && !now.includes(stuck) && !now.includes(first[0]!);
        },
        60_000,
      );
      expect(primary.output()).toContain('child process did not start within 10 s');
      await waitFor('/readyz to answer 200', async () => (await readyStatus(metricsPort)) === 200, 60_000);
      await waitForApiChildren(metricsPort, 2);
      await primary.stop('SIGTERM');
      expect(await primary.exited).toBe(0);
    } finally {
      if (primary.running()) await primary.stop('SIGKILL');
    }
  });

  it('gives up at start when no child can listen, and exits 1 saying why', { timeout: 150_000 }, async () => {
    // The API port is taken, so every child fails to listen and dies: a crash loop before any is up.
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const started = startServerProcess(
        await serverEnvironment(database.url, { LOG_LEVEL: 'info', PORT: String(port) }),
        120_000,
        ['--role', 'api', '--processes', '2'],
      );
      await expect(started).rejects.toThrow(
        /exited with 1 before it was ready[\s\S]*EADDRINUSE[\s\S]*the service could not start: an api child died 5 times/,
      );
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it(
    'replaces a child that dies, says not ready while none serves, and gives up on a crash loop',
    { timeout: 150_000 },
    async () => {
      const { primary, metricsPort } = await startPrimary('api');
      const headers = { Authorization: `Bearer ${org.key}` };
      const first = clusterChildPids(primary.pid);
      expect(first).toHaveLength(2);
      expect(await readyStatus(metricsPort)).toBe(200);

      // One child killed: it is logged, counted and replaced; the API keeps answering meanwhile.
      process.kill(first[0]!, 'SIGKILL');
      await waitFor(
        'a new child in place of the killed one',
        () => {
          const now = clusterChildPids(primary.pid);
          return now.length === 2 && !now.includes(first[0]!);
        },
        20_000,
      );
      expect(primary.output()).toContain('child process exited unexpectedly');
      for (let i = 0; i < 10; i += 1) {
        expect((await fetch(`${primary.apiUrl}/calls?limit=1`, { headers })).status).toBe(200);
      }
      await waitForApiChildren(metricsPort, 1);

      // Every child killed: /readyz answers 503 until one listens again, then 200.
      for (const pid of clusterChildPids(primary.pid)) process.kill(pid, 'SIGKILL');
      await waitFor('/readyz to answer 503 with no child', async () => (await readyStatus(metricsPort)) === 503, 5_000);
      await waitFor('/readyz to answer 200 again', async () => (await readyStatus(metricsPort)) === 200, 30_000);

      // A child that keeps dying: the primary stops the rest and exits 1.
      const deadline = Date.now() + 90_000;
      while (primary.running() && Date.now() < deadline) {
        for (const pid of clusterChildPids(primary.pid)) process.kill(pid, 'SIGKILL');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await primary.exited).toBe(1);
      expect(primary.output()).toContain('stopping the service');
    },
  );
});
