// A PostgreSQL cluster of the test's own (embedded, in a temporary directory, on a free loopback port)
// that the test may stop and start again for outage tests. The machine's shared server is never touched.
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { connectDatabase } from '../../src/database/connect.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/database/embedded.js';
import { migrateToLatest } from '../../src/database/migrate.js';

/** A migrated cluster that can be stopped and started again on the same data and port. */
export interface OwnPostgres {
  url: string;
  /** Stops the server (fast shutdown: sessions are cut). */
  stop(): Promise<void>;
  /** Starts it again on the same data directory and port. */
  start(): Promise<void>;
  /** Stops it and deletes its data. */
  destroy(): Promise<void>;
}

/**
 * Where freePort picks: below Linux's ephemeral range (32768 to 60999), so that no outgoing connection
 * of the files running beside this one takes the port between the pick and the child's bind.
 */
const PICKED_PORTS = { low: 10_000, high: 32_767 };

/** Whether a server can listen on `port` of 127.0.0.1 now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A free TCP port on 127.0.0.1, for a child process to listen on. */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = PICKED_PORTS.low + Math.floor(Math.random() * (PICKED_PORTS.high - PICKED_PORTS.low + 1));
    if (await canListen(port)) return port;
  }
}

/** Initialises, starts and migrates a cluster in a new temporary directory. */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'own-postgres-'));
  // Enterable by the cluster user when the tests run as root, so the cluster stays inside (and goes with) it.
  await chmod(dataDir, 0o755);
  const port = await freePort();
  let server: EmbeddedDatabase | null = await startEmbeddedPostgres(dataDir, port);
  const { db } = connectDatabase(server.url, { poolSize: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  const stop = async () => {
    await server?.stop();
    server = null;
  };
  return {
    url: server.url,
    stop,
    start: async () => {
      server ??= await startEmbeddedPostgres(dataDir, port);
    },
    destroy: async () => {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
