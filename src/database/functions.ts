// Installs the database functions kept as plain SQL files in db/functions/ (one CREATE OR REPLACE per
// file). A file runs again only when its content changed since it was last installed, so changing a
// rule is a one-file diff. A function whose signature changes needs a migration that drops the old one.
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { AnySchemaDb } from './any-schema.js';
import { projectFile } from '../project-files.js';

const FUNCTIONS_DIR = projectFile('db/functions');

/** The db/functions/*.sql files' names, in order. */
async function functionFiles(): Promise<string[]> {
  return (await readdir(FUNCTIONS_DIR)).filter((name) => name.endsWith('.sql')).sort();
}

/**
 * Each db/functions/*.sql file with when the database last installed it, or null when it never did (a
 * function this release adds). A file installed with other content counts as installed: another release
 * of the service may be running beside this one, and `migrate` installs the content of the release it runs.
 */
export async function functionStatus(db: AnySchemaDb): Promise<Array<{ file: string; installedAt: Date | null }>> {
  const files = await functionFiles();
  const { rows } = await sql<{
    present: boolean;
  }>`SELECT to_regclass('schema_functions') IS NOT NULL AS present`.execute(db);
  const installed = new Map<string, Date>();
  if (rows[0]!.present) {
    const found = await sql<{
      file: string;
      installed_at: Date;
    }>`SELECT file, installed_at FROM schema_functions`.execute(db);
    for (const row of found.rows) installed.set(row.file, row.installed_at);
  }
  return files.map((file) => ({ file, installedAt: installed.get(file) ?? null }));
}

/** Installs every new or changed db/functions/*.sql file in one transaction; returns the files installed. */
export async function installFunctions(db: AnySchemaDb): Promise<string[]> {
  const files = await functionFiles();
  const sources = await Promise.all(
    files.map(async (file) => [file, await readFile(path.join(FUNCTIONS_DIR, file), 'utf8')] as const),
  );
  return db.transaction().execute(async (trx) => {
    // One installer at a time, whatever the number of processes starting together.
    await sql`SELECT pg_advisory_xact_lock(hashtextextended('schema_functions', 0))`.execute(trx);
    const installed = new Map(
      (await trx.selectFrom('schema_functions').select(['file', 'sha256']).execute()).map((row) => [
        row.file,
        row.sha256,
      ]),
    );
    const changed: string[] = [];
    for (const [file, source] of sources) {
      const sha256 = createHash('sha256').update(source).digest('hex');
      if (installed.get(file) === sha256) continue;
      await sql.raw(source).execute(trx);
      await trx
        .insertInto('schema_functions')
        .values({ file, sha256, installed_at: new Date() })
        .onConflict((oc) => oc.column('file').doUpdateSet({ sha256, installed_at: new Date() }))
        .execute();
      changed.push(file);
    }
    return changed;
  });
}
