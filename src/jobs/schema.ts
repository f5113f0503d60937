// Installs and upgrades pg-boss's schema as part of the migrate step, on the migration connection (its
// timeouts), with the SQL pg-boss exports for that: its construction plan on a database without it, its
// migration plan from the installed version otherwise. A service process only checks the version.
import { createRequire } from 'node:module';
import { CompiledQuery } from 'kysely';
import { fromKysely, getConstructionPlans, getMigrationPlans, PgBoss } from 'pg-boss';
import type { AnySchemaDb } from '../database/any-schema.js';
import { JOB_SCHEMA } from './policy.js';

/** What the step did: the version installed, and the one it replaced (null: a new install). */
export interface JobSchemaChange {
  from: number | null;
  to: number;
}

/** Brings pg-boss's schema to this build's version; null when it was current. Database errors propagate. */
export async function migrateJobSchema(db: AnySchemaDb): Promise<JobSchemaChange | null> {
  // Only asked about the schema: never started, so it opens nothing of its own.
  const boss = new PgBoss({ db: fromKysely(db), schema: JOB_SCHEMA });
  if (!(await boss.isInstalled())) {
    await db.executeQuery(CompiledQuery.raw(getConstructionPlans(JOB_SCHEMA)));
    return { from: null, to: currentVersion() };
  }
  const version = await boss.schemaVersion();
  if (version === null || version >= currentVersion()) return null;
  await db.executeQuery(CompiledQuery.raw(getMigrationPlans(JOB_SCHEMA, version)));
  return { from: version, to: currentVersion() };
}

/** Whether pg-boss's schema is installed at this build's version (or a later one). */
export async function jobSchemaCurrent(db: AnySchemaDb): Promise<boolean> {
  const boss = new PgBoss({ db: fromKysely(db), schema: JOB_SCHEMA });
  if (!(await boss.isInstalled())) return false;
  const version = await boss.schemaVersion();
  return version !== null && version >= currentVersion();
}

/** The schema version the installed pg-boss package expects (its package.json's `pgboss.schema`). */
function currentVersion(): number {
  const manifest = createRequire(import.meta.url)('pg-boss/package.json') as { pgboss?: { schema?: unknown } };
  const version = manifest.pgboss?.schema;
  if (typeof version !== 'number') throw new Error("pg-boss's package.json names no schema version");
  return version;
}
