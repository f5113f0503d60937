// A rolling restart of two instances behind a load balancer, while clients keep sending over keep-alive
// connections: each instance, on SIGTERM, reports not ready, keeps answering (closing connections after
// each answer) until the balancer has moved away, finishes what it has, and exits. No client sees a
// connection reset or a 5xx, and the balancer never fails to forward a request.
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { createTestOrg, type TestOrg } from './support/app.js';
import { startBalancer, type Balancer } from './support/balancer.js';
import { waitFor } from './support/calls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import {
  killServerProcesses,
  serverEnvironment,
  startServerProcess,
  type ServerProcess,
} from './support/server-process.js';

let database: TestDatabase;
let org: TestOrg;
let balancer: Balancer;
const ports: number[] = [];
const instances = new Map<number, ServerProcess>();
/** Every instance started, restarted ones included, for their output when the test fails. */
const started: ServerProcess[] = [];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function start(port: number): Promise<void> {
  const instance = await startServerProcess(
    await serverEnvironment(database.url, { PORT: String(port), SHUTDOWN_DRAIN_MS: '4000', LOG_LEVEL: 'warn' }),
  );
  instances.set(port, instance);
  started.push(instance);
  await waitFor(`instance ${port} to take traffic`, () => balancer.healthy(port), 20_000);
}

beforeAll(async () => {
  database = await createTestDatabase();
  org = await createTestOrg(database.db, { planId: 'scale' });
  ports.push(await freePort(), await freePort());
  balancer = await startBalancer(ports);
  for (const port of ports) await start(port);
}, 120_000);

afterAll(async () => {
  killServerProcesses();
  await balancer?.close();
  await database?.drop();
});

describe('a rolling restart of two instances', () => {
  it('loses no request: no reset, no 5xx, nothing the balancer could not forward', { timeout: 120_000 }, async () => {
    onTestFailed(() => {
      for (const instance of started) console.log(`instance ${instance.pid}'s output:\n${instance.output()}`);
    });
    const headers = { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' };
    const begun = performance.now();
    let running = true;
    let sent = 0;
    const problems: string[] = [];
    const client = async (n: number) => {
      while (running) {
        sent += 1;
        try {
          const response =
            sent % 2 === 0
              ? await fetch(`${balancer.url}/api/v1/calls?limit=5`, { headers })
              : await fetch(`${balancer.url}/api/v1/contacts`, {
                  method: 'POST',
                  headers,
                  body: JSON.stringify({
                    phone_e164: `+9198140${String(n * 10000 + (sent % 10000)).padStart(5, '0')}`,
                    consent_capture: 'manual',
                  }),
                });
          const body = await response.text();
          // When, and what the answer said, so a failure tells a deadline from the database breaker.
          if (response.status >= 500) {
            problems.push(`status ${response.status} at ${(performance.now() - begun).toFixed(0)} ms: ${body}`);
          }
        } catch (error) {
          const { cause, message } = error as Error;
          problems.push(`client error: ${cause instanceof Error ? cause.message : message}`);
        }
      }
    };
    const clients = [0, 1, 2, 3].map(client);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    for (const port of ports) {
      const stopping = instances.get(port)!;
      await stopping.stop('SIGTERM');
      expect(stopping.output()).not.toMatch(/unhandled|Error:/);
      await start(port);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    running = false;
    await Promise.all(clients);
    console.log(
      `rolling restart: ${sent} requests through 2 restarts, ${problems.length} client errors or 5xx, ` +
        `${balancer.forwardFailures.length} resets between balancer and instances`,
    );
    expect(problems).toEqual([]);
    expect(balancer.forwardFailures).toEqual([]);
    expect(sent).toBeGreaterThan(100);
  });
});
