// SIGTERM while the database is silent (connections open, nothing answered, as a hung server or a
// network partition looks): the process still stops within its drain and shutdown timeout, saying what
// it gave up waiting for, instead of waiting for the database to answer again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { killServerProcesses, serverEnvironment, startServerProcess } from './support/server-process.js';
import { startTcpProxy, throughProxy, type TcpProxy } from './support/tcp-proxy.js';

const DRAIN_MS = 200;
const SHUTDOWN_TIMEOUT_MS = 2_000;

let database: TestDatabase;
let proxy: TcpProxy;

beforeAll(async () => {
  database = await createTestDatabase();
  const target = new URL(database.url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
});

afterAll(async () => {
  killServerProcesses();
  await proxy?.close();
  await database?.drop();
});

describe('SIGTERM with a silent database', () => {
  it('stops within the drain and shutdown timeout, and says it gave up', { timeout: 120_000 }, async () => {
    const env = await serverEnvironment(throughProxy(database.url, proxy), {
      LOG_LEVEL: 'info',
      SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    });
    const server = await startServerProcess(env);
    // Every pooled connection is open through the proxy when it goes silent.
    const ready = await fetch(`${server.baseUrl}/readyz`);
    expect(ready.status).toBe(200);

    proxy.silence();
    const stoppedAt = Date.now();
    await server.stop('SIGTERM');
    const tookMs = Date.now() - stoppedAt;

    expect(await server.exited).toBe(1);
    // The deadline: the drain, the shutdown timeout for requests and again for background work, and 5 s
    // to close connections; with a margin for a loaded machine.
    expect(tookMs).toBeLessThan(DRAIN_MS + 2 * SHUTDOWN_TIMEOUT_MS + 5_000 + 3_000);
    expect(server.output()).toContain('gave up waiting to stop');
  });
});
