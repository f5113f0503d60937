// A database function a release adds is part of the schema: until `migrate` installs it, the deploy gate
// (`migrate --check`) and a process started with MIGRATE_ON_START=false find the schema behind. A function
// installed with other content (by another release running beside this one) counts as installed. So
// does the job engine's schema (pg-boss) when it is behind.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { pendingMigrations } from '../src/database/migrate.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { runCommand } from './support/cli.js';

const FILE = 'record_placed_calls.sql';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

it('counts a function never installed as pending until migrate installs it', async () => {
  await sql`DROP FUNCTION record_placed_calls`.execute(database.db);
  await database.db.deleteFrom('schema_functions').where('file', '=', FILE).execute();
  expect(await pendingMigrations(database.db)).toEqual([`db/functions/${FILE}`]);

  const check = await runCommand(database.url, ['migrate', '--check']);
  expect(check.code, check.stderr).toBe(2);
  expect(check.stdout).toMatch(new RegExp(`^pending +db/functions/${FILE.replace('.', '\\.')}$`, 'm'));
  expect(check.stdout).toContain('1 pending.');
  const serve = await runCommand(database.url, ['serve'], { MIGRATE_ON_START: 'false', PORT: '0', HOST: '127.0.0.1' });
  expect(serve.code).not.toBe(0);
  expect(serve.stderr).toContain(`db/functions/${FILE}`);

  expect((await runCommand(database.url, ['migrate'])).code).toBe(0);
  const current = await runCommand(database.url, ['migrate', '--check']);
  expect(current.code, current.stdout).toBe(0);
  expect(current.stdout).toContain('Up to date.');
  const { rows } = await sql<{ found: boolean }>`SELECT to_regprocedure(
    'record_placed_calls(text[], text, jsonb, boolean)') IS NOT NULL AS found`.execute(database.db);
  expect(rows[0]!.found).toBe(true);

  await database.db
    .updateTable('schema_functions')
    .set({ sha256: '0'.repeat(64) })
    .where('file', '=', FILE)
    .execute();
  expect(await pendingMigrations(database.db)).toEqual([]);
});

it("counts the job engine's schema as pending when it is behind, as serve does", async () => {
  await sql`DROP SCHEMA pgboss CASCADE`.execute(database.db);
  expect(await pendingMigrations(database.db)).toEqual(['pg-boss']);
  const check = await runCommand(database.url, ['migrate', '--check']);
  expect(check.code, check.stdout).toBe(2);
  expect(check.stdout).toMatch(/^pending +pg-boss$/m);
  expect(check.stdout).toContain('1 pending.');
  const json = await runCommand(database.url, ['migrate', '--status', '--json']);
  expect((JSON.parse(json.stdout) as Array<{ name: string; applied_at: string | null }>).at(-1)).toEqual({
    name: 'pg-boss',
    applied_at: null,
  });

  expect((await runCommand(database.url, ['migrate'])).code).toBe(0);
  const current = await runCommand(database.url, ['migrate', '--check']);
  expect(current.code, current.stdout).toBe(0);
  expect(current.stdout).not.toContain('pg-boss');
});
