// PostgreSQL stopped for a few seconds under a running server process (its own embedded cluster, never
// the machine's): API requests fail fast with 503 service_unavailable and Retry-After in the envelope,
// never 401 or 500, the process stays up,
// /readyz says 503 while /healthz still answers, and everything resumes by itself once the database is
// back: new requests, the calls that were in flight, and the deliveries of their events.
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { connectDatabase, type Db } from '../src/database/connect.js';
import { createTestOrg, type TestOrg } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { startOwnPostgres, type OwnPostgres } from './support/own-postgres.js';
import {
  killServerProcesses,
  serverEnvironment,
  startServerProcess,
  type ServerProcess,
} from './support/server-process.js';
import { answer, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { parseJson, type Schemas } from './support/json.js';

/** How long a request may take while the database is down. */
const FAIL_FAST_MS = 6_000;
const OUTAGE_MS = 4_000;
const TERMINAL = ['completed', 'failed', 'no_answer', 'busy', 'canceled'];

let cluster: OwnPostgres;
let db: Db;
let receiver: Receiver;
let server: ServerProcess;
let org: TestOrg;

beforeAll(async () => {
  cluster = await startOwnPostgres();
  db = connectDatabase(cluster.url, { poolSize: 2 }).db;
  receiver = await startReceiver(answer(200));
  org = await createTestOrg(db, { planId: 'scale', credits: 1_000_000 });
  // 200 ms per simulated second: a call lasts 5 to 15 s, so calls placed before the outage outlive it.
  server = await startServerProcess(
    await serverEnvironment(cluster.url, { SIMULATOR_STEP_MS: '200', LOG_LEVEL: 'info' }),
  );
}, 120_000);

afterAll(async () => {
  killServerProcesses();
  await receiver?.close();
  await db?.destroy();
  await cluster?.destroy();
});

async function timed(url: string, init: RequestInit = {}) {
  const started = performance.now();
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(30_000) });
  const text = await response.text();
  return {
    status: response.status,
    text,
    retryAfter: response.headers.get('retry-after'),
    ms: performance.now() - started,
  };
}

describe('PostgreSQL stopped for a few seconds', () => {
  it(
    'fails fast with service_unavailable, keeps the process up, reports it on /readyz, and recovers alone',
    { timeout: 120_000 },
    async () => {
      onTestFailed(() => console.log(`server output:\n${server.output()}`));
      const auth = { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' };
      const registered = await timed(`${server.apiUrl}/webhooks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          url: receiver.url,
          events: ['call.completed', 'call.failed', 'call.no_answer', 'call.busy', 'contact.created'],
        }),
      });
      expect(registered.status).toBe(201);
      const callIds: string[] = [];
      for (const ending of ['7777', '0002', '0004', '1234']) {
        const placed = await timed(`${server.apiUrl}/calls`, {
          method: 'POST',
          headers: auth,
          body: JSON.stringify({ agent_id: org.agentId, to_e164: testNumber(ending) }),
        });
        expect(placed.status).toBe(201);
        callIds.push(parseJson<Schemas['CallCreatedResponse']>(placed.text).data.id);
      }

      await cluster.stop();
      const outageEnds = Date.now() + OUTAGE_MS;
      const failures: Array<Awaited<ReturnType<typeof timed>>> = [];
      const probes: Array<{ ready: number; healthy: number }> = [];
      while (Date.now() < outageEnds) {
        const [list, upsert, ready, healthy] = await Promise.all([
          timed(`${server.apiUrl}/calls`, { headers: auth }),
          timed(`${server.apiUrl}/contacts`, {
            method: 'POST',
            headers: auth,
            body: JSON.stringify({ phone_e164: testNumber('5555'), consent_capture: 'manual' }),
          }),
          timed(`${server.baseUrl}/readyz`),
          timed(`${server.baseUrl}/healthz`),
        ]);
        failures.push(list, upsert);
        probes.push({ ready: ready.status, healthy: healthy.status });
        expect(ready.ms).toBeLessThan(FAIL_FAST_MS);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(server.running()).toBe(true);
      expect(failures.length).toBeGreaterThanOrEqual(8);
      for (const failure of failures) {
        expect(failure.status, failure.text).toBe(503);
        expect(JSON.parse(failure.text)).toEqual({
          error: { code: 'service_unavailable', message: expect.any(String) as unknown },
        });
        expect(Number(failure.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(failure.ms).toBeLessThan(FAIL_FAST_MS);
      }
      expect(probes.every((probe) => probe.ready === 503 && probe.healthy === 200)).toBe(true);

      await cluster.start();
      const backAt = Date.now();
      await waitFor(
        '/readyz to report the database again',
        async () => (await timed(`${server.baseUrl}/readyz`)).status === 200,
        20_000,
      );
      await waitFor(
        'the API to answer again',
        async () => (await timed(`${server.apiUrl}/calls`, { headers: auth })).status === 200,
        20_000,
      );
      const recoveredMs = Date.now() - backAt;
      expect(server.running()).toBe(true);
      // The delivery listener reported the outage once when it began and once when it ended.
      await waitFor('the delivery listener to connect again', () =>
        server.output().includes('webhook delivery listener resumed'),
      );
      const listener = server
        .output()
        .split('\n')
        .filter((line) => line.includes('webhook delivery listener'));
      expect(listener.map((line) => (JSON.parse(line) as { msg: string }).msg)).toEqual([
        'webhook delivery listener paused: the database is unavailable; retrying with backoff',
        'webhook delivery listener resumed: the database answers again',
      ]);

      // The calls in flight during the outage end, and every event committed reaches the receiver.
      const contact = await timed(`${server.apiUrl}/contacts`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ phone_e164: testNumber('6666'), consent_capture: 'manual' }),
      });
      expect(contact.status).toBe(201);
      await waitFor(
        'the calls of before the outage to end',
        async () => {
          const rows = await db.selectFrom('calls').select('status').where('id', 'in', callIds).execute();
          return rows.every((row) => TERMINAL.includes(row.status));
        },
        40_000,
      );
      const events = await db.selectFrom('events').select('id').where('org_id', '=', org.orgId).execute();
      expect(events.length).toBe(callIds.length + 1);
      await waitFor(
        'every event to be delivered',
        () => {
          const received = new Set(receiver.requests.map((request) => parseJson<{ id: string }>(request.rawBody).id));
          return events.every((event) => received.has(event.id));
        },
        20_000,
      );
      expect(server.running()).toBe(true);
      console.info(
        `database outage: ${failures.length} API requests failed fast (slowest ${Math.round(Math.max(...failures.map((f) => f.ms)))} ms); service back ${recoveredMs} ms after the database; ${events.length} events delivered, 0 lost`,
      );
      await server.stop('SIGTERM');
    },
  );
});
