// Opens the service database: DATABASE_URL when set, else the embedded PostgreSQL under DATA_DIR; then
// applies pending migrations, or checks there are none, on a connection with the migration timeouts.
import pg from 'pg';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { connectDatabase, type Db } from './connect.js';
import { embeddedDatabaseUrl, startEmbeddedPostgres } from './embedded.js';
import { migrateToLatest, pendingMigrations, SchemaBehindError, withMigrationConnection } from './migrate.js';

export interface OpenDatabase {
  db: Db;
  pool: pg.Pool;
  url: string;
  embedded: boolean;
  /** Closes the pool and, if this process started it, stops the embedded server. */
  close(): Promise<void>;
}

/** What to do about migrations when opening: apply them, insist there are none pending, or leave them. */
export type MigrationMode = 'apply' | 'require-current' | 'ignore';

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

/** The mode the configuration asks for at start: apply, unless MIGRATE_ON_START=false. */
export function startupMigrationMode(config: Pick<Config, 'migrateOnStart'>): MigrationMode {
  return config.migrateOnStart ? 'apply' : 'require-current';
}

/**
 * Connects (starting the embedded server when there is no DATABASE_URL and none is running yet) and
 * handles migrations as `mode` says, logging each one applied. Throws when the database cannot be
 * reached or migrated, and SchemaBehindError when `require-current` finds pending migrations.
 */
export async function openDatabase(
  config: Config,
  options: { migrations: MigrationMode; logger?: Logger },
): Promise<OpenDatabase> {
  let url = config.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | null = null;
  if (!url) {
    // Another process (the server, or the CLI beside it) may already run the embedded cluster.
    const running = await embeddedDatabaseUrl(config.dataDir, config.embeddedPostgresPort);
    if (running && (await answers(running))) {
      url = running;
    } else {
      const embedded = await startEmbeddedPostgres(config.dataDir, config.embeddedPostgresPort);
      url = embedded.url;
      stopEmbedded = () => embedded.stop();
    }
  }
  try {
    if (options.migrations !== 'ignore') {
      const timeouts = {
        statementTimeoutMs: config.migrationStatementTimeoutMs,
        lockTimeoutMs: config.migrationLockTimeoutMs,
      };
      await withMigrationConnection(url, timeouts, async (db) => {
        if (options.migrations === 'apply') {
          await migrateToLatest(db, (kind, name) => options.logger?.info({ [kind]: name }, `applied ${kind} ${name}`));
        } else {
          const pending = await pendingMigrations(db);
          if (pending.length > 0) throw new SchemaBehindError(pending);
        }
      });
    }
  } catch (error) {
    if (stopEmbedded) await stopEmbedded();
    throw error;
  }
  const { db, pool } = connectDatabase(url, {
    poolSize: config.dbPoolSize,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    statementTimeoutMs: config.dbStatementTimeoutMs,
    queryTimeoutMs: config.dbQueryTimeoutMs,
    namedStatements: config.dbNamedStatements,
    maxConnectionAgeS: config.dbConnectionMaxAgeS,
  });
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
