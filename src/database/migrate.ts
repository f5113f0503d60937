// Applies pending migrations from db/migrations in order; throws when one fails.
import { Migrator, type Kysely, type MigrationProvider } from 'kysely';
import { migrations } from '../../db/migrations/index.js';

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Brings the schema up to date; returns the names of migrations applied now. */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  // Resource migrations were written in parallel; applying them out of name order is safe for them.
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}
