// A fresh, migrated database per test file, cloned from the run's template and dropped afterwards.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { connectDatabase, type Db } from '../../src/database/connect.js';

export interface TestDatabase {
  url: string;
  db: Db;
  drop(): Promise<void>;
}

/** Runs one statement as the test run's administrator, on its admin database. */
export async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: inject('adminDatabaseUrl') });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** Creates a database from the template; retries while another clone holds the template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `voice_test_${randomBytes(5).toString('hex')}`;
  for (let attempt = 0; ; attempt += 1) {
    try {
      await adminQuery(`CREATE DATABASE ${name} TEMPLATE ${inject('templateDatabase')}`);
      break;
    } catch (error) {
      if (attempt >= 20 || !String(error).includes('being accessed by other users')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
    }
  }
  const url = new URL(inject('adminDatabaseUrl'));
  url.pathname = `/${name}`;
  // Named statements as the service runs them (DB_NAMED_STATEMENTS defaults to true).
  const { db } = connectDatabase(url.toString(), { poolSize: 10, namedStatements: true });
  return {
    url: url.toString(),
    db,
    drop: async () => {
      await db.destroy();
      await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    },
  };
}

/** Creates an empty database (no migrations applied) and returns its URL and a function that drops it. */
export async function createEmptyDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `voice_empty_${randomBytes(5).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(inject('adminDatabaseUrl'));
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/** Whether another session now waits for a lock held by the session of `trx` (an open transaction). */
export async function blocksAnother(trx: Db): Promise<boolean> {
  // A transaction keeps its first view of pg_stat_activity unless told to take a new one.
  await sql`SELECT pg_stat_clear_snapshot()`.execute(trx);
  const { rows } = await sql<{ blocks: boolean }>`
    SELECT EXISTS (
      SELECT 1 FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid))
    ) AS blocks`.execute(trx);
  return rows[0]!.blocks;
}
