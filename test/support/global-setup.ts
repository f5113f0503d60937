// Once per test run: build dist/ (the executable the CLI and process tests run), find or start a
// PostgreSQL server and build a migrated template database that every test file clones, so files are
// isolated and can run in parallel.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { connectDatabase } from '../../src/database/connect.js';
import { migrateToLatest } from '../../src/database/migrate.js';
import { startEmbeddedPostgres } from '../../src/database/embedded.js';
import { startPrism } from './prism-process.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    templateDatabase: string;
    /** Each test process appends the answers its apps send here (test/support/contract-recorder.ts). */
    contractRecordDir: string;
    /** The Prism proxy every API request goes through, or '' (set PRISM_JUDGE=1: `npm run test:prism`). */
    prismUrl: string;
  }
}

export default async function setup(project: TestProject) {
  // `npm run build` writes nothing when dist/ is current (CI has just built it), and is safe beside
  // commands that build at the same time (scripts/build.ts).
  execFileSync('npm', ['run', '-s', 'build'], { stdio: 'inherit' });
  let adminUrl = process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || '';
  let stopEmbedded: (() => Promise<void>) | null = null;
  if (!adminUrl) {
    // TEST_EMBEDDED_PG_PORT moves the tests' own cluster off 54331 when another program holds that port.
    const port = Number(process.env.TEST_EMBEDDED_PG_PORT || 54331);
    const embedded = await startEmbeddedPostgres(path.resolve('.data/test'), port);
    adminUrl = embedded.url;
    stopEmbedded = () => embedded.stop();
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
  const recordDir = mkdtempSync(path.join(tmpdir(), 'contract-records-'));
  project.provide('contractRecordDir', recordDir);
  const prism = process.env.PRISM_JUDGE === '1' ? await startPrism() : null;
  project.provide('prismUrl', prism?.url ?? '');

  return async () => {
    await prism?.stop();
    // With CONTRACT_RECORDS=<file>, the run's (operationId, status, code) records go there for
    // `npm run contract:coverage -- <file>`; unset, they are dropped (so concurrent runs never clash).
    const target = process.env.CONTRACT_RECORDS;
    if (target) {
      const records = readdirSync(recordDir).map((name) => readFileSync(path.join(recordDir, name), 'utf8'));
      mkdirSync(path.dirname(path.resolve(target)), { recursive: true });
      writeFileSync(target, records.join(''));
    }
    rmSync(recordDir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`);
    await admin.end();
    if (stopEmbedded) await stopEmbedded();
  };
}
