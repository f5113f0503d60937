// Once per test run: find or start a PostgreSQL server and build a migrated template database
// that every test file clones, so files are isolated and can run in parallel.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { connectDatabase } from '../../src/database/connect.js';
import { migrateToLatest } from '../../src/database/migrate.js';
import { startEmbeddedPostgres } from '../../src/database/embedded.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
  }
}

export default async function setup(project: TestProject) {
  let adminUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || '';
  let stopEmbedded: (() => Promise<void>) | null = null;
  if (!adminUrl) {
    const embedded = await startEmbeddedPostgres(path.resolve('.data/test'), 54331);
    adminUrl = embedded.url;
    stopEmbedded = embedded.stop;
  }
  const template = `voice_tmpl_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${template}`);
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${template}`;
  const { db } = connectDatabase(templateUrl.toString(), { poolSize: 1 });
  await migrateToLatest(db);
  await db.destroy();
  project.provide('adminDatabaseUrl', adminUrl);
  project.provide('templateDatabase', template);

  return async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end();
    if (stopEmbedded) await stopEmbedded();
  };
}
