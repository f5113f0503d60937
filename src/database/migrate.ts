// Brings a database up to date: pending migrations from db/migrations in order, the functions of
// db/functions that are new or changed, then the job engine's schema (pg-boss, src/jobs/schema.ts). Runs on a connection of its own, with the migration timeouts
// rather than the request timeouts.
import type { AnySchemaDb } from './any-schema.js';
import { Migrator, type MigrationProvider } from 'kysely/migration';
import { migrations } from '../../db/migrations/index.js';
import { connectDatabase } from './connect.js';
import { functionStatus, installFunctions } from './functions.js';
import { jobSchemaCurrent, migrateJobSchema } from '../jobs/schema.js';

const provider: MigrationProvider = { getMigrations: () => Promise.resolve(migrations) };

/** What a migration run did: the migrations applied and the function files installed, by name, and the job schema's change. */
export interface MigrationReport {
  migrations: string[];
  functions: string[];
  /** pg-boss's schema, "pg-boss N" (or "pg-boss M to N" when upgraded); null when it was current. */
  jobSchema: string | null;
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
      `the database schema is behind this version: ${pending.length} schema change(s) pending (${pending.join(', ')}); ` +
        'run the `migrate` command (or start with MIGRATE_ON_START=true)',
    );
  }
}

function migratorFor(db: AnySchemaDb): Migrator {
  // Resource migrations were written in parallel; applying them out of name order is safe for them.
  return new Migrator({ db, provider, allowUnorderedMigrations: true });
}

/**
 * Applies pending migrations, installs new or changed database functions, then installs or upgrades
 * the job engine's schema, calling `onApplied` for each. Throws the first migration's error.
 */
export async function migrateToLatest(
  db: AnySchemaDb,
  onApplied: (kind: 'migration' | 'function' | 'schema', name: string) => void = () => undefined,
): Promise<MigrationReport> {
  const { error, results } = await migratorFor(db).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error('a migration failed', { cause: error });
  const applied = (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
  for (const name of applied) onApplied('migration', name);
  const functions = await installFunctions(db);
  for (const name of functions) onApplied('function', name);
  const change = await migrateJobSchema(db);
  const jobSchema = change && `pg-boss ${change.from === null ? '' : `${change.from} to `}${change.to}`;
  if (jobSchema) onApplied('schema', jobSchema);
  return { migrations: applied, functions, jobSchema };
}

/**
 * The names of migrations not yet applied to the database and of database functions never installed in
 * it, in order, then "pg-boss" when its schema is behind.
 */
export async function pendingMigrations(db: AnySchemaDb): Promise<string[]> {
  return (await migrationStatus(db)).filter((change) => change.appliedAt === null).map((change) => change.name);
}

/**
 * Every migration with when it was applied, then every database function (as db/functions/FILE) with when
 * it was installed (null when pending), then "pg-boss" (pending) when the job engine's schema is behind:
 * pg-boss keeps no date of its own install, so a current one is not listed.
 */
export async function migrationStatus(db: AnySchemaDb): Promise<Array<{ name: string; appliedAt: Date | null }>> {
  const known = await migratorFor(db).getMigrations();
  const functions = await functionStatus(db);
  const jobSchema = (await jobSchemaCurrent(db)) ? [] : [{ name: 'pg-boss', appliedAt: null }];
  return [
    ...known.map((migration) => ({ name: migration.name, appliedAt: migration.executedAt ?? null })),
    ...functions.map((entry) => ({ name: `db/functions/${entry.file}`, appliedAt: entry.installedAt })),
    ...jobSchema,
  ];
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
