// Brings a database up to date: pending migrations from db/migrations in order, then the functions of
// db/functions that are new or changed. Runs on a connection of its own, with the migration timeouts
// rather than the request timeouts.
import type { AnySchemaDb } from './any-schema.js';
import { Migrator, type MigrationProvider } from 'kysely/migration';
import { migrations } from '../../db/migrations/index.js';
import { connectDatabase } from './connect.js';
import { installFunctions } from './functions.js';

const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations) };

/** What a migration run did: the migrations applied and the function files installed, by name. */
export interface MigrationReport {
  migrations: string[];
  functions: string[];
}

/** How long migrations may take: each statement, and the wait for another process's migration lock. */
export interface MigrationTimeouts {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
}

/** The schema is older than this build and migrations were not to be applied. */
export class SchemaBehindError extends Error {
  constructor(readonly pending: string[]) {
    super(
      `the database schema is behind this version: ${pending.length} migration(s) pending (${pending.join(', ')}); ` +
        'run the `migrate` command (or start with MIGRATE_ON_START=true)',
    );
  }
}

function migratorFor(db: AnySchemaDb): Migrator {
  // Resource migrations were written in parallel; applying them out of name order is safe for them.
  return new Migrator({ db, provider, allowUnorderedMigrations: true });
}

/**
 * Applies pending migrations, then installs new or changed database functions, calling `onApplied` for
 * each. Throws the first migration's error.
 */
export async function migrateToLatest(
  db: AnySchemaDb,
  onApplied: (kind: 'migration' | 'function', name: string) => void = () => undefined,
): Promise<MigrationReport> {
  const { error, results } = await migratorFor(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error('a migration failed', { cause: error });
  const applied = (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
  for (const name of applied) onApplied('migration', name);
  const functions = await installFunctions(db);
  for (const name of functions) onApplied('function', name);
  return { migrations: applied, functions };
}

/** The names of migrations not yet applied to the database, in order. */
export async function pendingMigrations(db: AnySchemaDb): Promise<string[]> {
  const known = await migratorFor(db).getMigrations();
  return known.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}

/** Every migration with when it was applied (null when pending), in order. */
export async function migrationStatus(db: AnySchemaDb): Promise<Array<{ name: string; appliedAt: Date | null }>> {
  const known = await migratorFor(db).getMigrations();
  return known.map((migration) => ({ name: migration.name, appliedAt: migration.executedAt ?? null }));
}

/** Runs `work` on a one-connection pool to `url` with the migration timeouts, then closes it. */
export async function withMigrationConnection<T>(
  url: string,
  timeouts: MigrationTimeouts,
  work: (db: AnySchemaDb) => Promise<T>,
): Promise<T> {
  const { db } = connectDatabase(url, {
    poolSize: 1,
    statementTimeoutMs: timeouts.statementTimeoutMs,
    lockTimeoutMs: timeouts.lockTimeoutMs,
    queryTimeoutMs: 0,
    idleInTransactionTimeoutMs: 0,
    connectTimeoutMs: 10_000,
  });
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}
