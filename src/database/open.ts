// Opens the service database: DATABASE_URL when set, else the embedded PostgreSQL under DATA_DIR.
import pg from 'pg';
import type { Config } from '../config.js';
import { connectDatabase, type Db } from './connect.js';
import { startEmbeddedPostgres, embeddedUrl } from './embedded.js';
import { migrateToLatest } from './migrate.js';

export interface OpenDatabase {
  db: Db;
  pool: pg.Pool;
  url: string;
  embedded: boolean;
  /** Closes the pool and, if this process started it, stops the embedded server. */
  close(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Connects (starting the embedded server when there is no DATABASE_URL and none is running yet) and
 * applies pending migrations. Throws when the database cannot be reached or migrated.
 */
export async function openDatabase(config: Config): Promise<OpenDatabase> {
  let url = config.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | null = null;
  if (!url) {
    url = embeddedUrl(config.embeddedPostgresPort);
    // Another process (the server, or the CLI beside it) may already run the embedded cluster.
    if (!(await answers(url))) {
      const embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort);
      stopEmbedded = embedded.stop;
    }
  }
  const { db, pool } = connectDatabase(url, { poolSize: config.dbPoolSize });
  try {
    await migrateToLatest(db);
  } catch (error) {
    await db.destroy();
    if (stopEmbedded) await stopEmbedded();
    throw error;
  }
  return {
    db,
    pool,
    url,
    embedded: config.databaseUrl === null,
    close: async () => {
      await db.destroy();
      if (stopEmbedded) await stopEmbedded();
    },
  };
}
