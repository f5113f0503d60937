// Brings a database up to date: pending migrations from db/migrations in order, then the functions of
// db/functions that are new or changed. Throws when either fails.
import { Migrator, type Kysely, type MigrationProvider } from 'kysely';
import { migrations } from '../../db/migrations/index.js';
import { installFunctions } from './functions.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** What a migration run did: the migrations applied and the function files installed, by name. */
export interface MigrationReport {
  migrations: string[];
  functions: string[];
}

/** Applies pending migrations, then installs new or changed database functions. */
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationReport> {
  // Resource migrations were written in parallel; applying them out of name order is safe for them.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  const applied = (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
  return { migrations: applied, functions: await installFunctions(db) };
}
