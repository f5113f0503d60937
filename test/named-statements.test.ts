// The per-request queries run as server-side prepared statements (DB_NAMED_STATEMENTS, on by default):
// they are prepared on the connection that runs them and only there; a pool configured without them
// prepares nothing; a migration that adds a column leaves every read working; and a statement whose
// result columns a migration changed runs unnamed from then on: without failing the request outside a
// transaction, and reported as a database that cannot answer now (503) inside one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { connectDatabase, type Db } from '../src/database/connect.js';
import { databaseFault } from '../src/database/faults.js';
import { prepareQuery, type Arg } from '../src/database/prepared-query.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

/** The statements prepared on the connection of a one-connection pool. */
async function preparedOn(db: Db): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`
    SELECT statement FROM pg_prepared_statements WHERE name LIKE 'vc\_%' ORDER BY prepare_time`.execute(db);
  return rows.map((row) => row.statement);
}

/** Starts an app over a one-connection pool of the test database, places a call and reads it back. */
async function readOneCall(namedStatements: boolean): Promise<{ db: Db; app: TestApp; org: TestOrg; callId: string }> {
  const { db } = connectDatabase(database.url, { poolSize: 1, namedStatements });
  const app = await startTestApp({ db, url: database.url }, { workers: false });
  const org = await createTestOrg(db);
  const client = app.client(org.key);
  const created = await client.POST('/calls', { body: { agent_id: org.agentId, to_e164: '+919800000101' } });
  expect(created.response.status).toBe(201);
  const callId = created.data!.data.id;
  const read = await client.GET('/calls/{id}', { params: { path: { id: callId } } });
  expect(read.response.status).toBe(200);
  return { db, app, org, callId };
}

describe('named statements', () => {
  it('prepares the call read on the connection that ran it', async () => {
    const { db, app } = await readOneCall(true);
    try {
      const statements = await preparedOn(db);
      expect(statements.some((text) => /from "calls" where "id" = \$1 and "org_id" = \$2/.test(text))).toBe(true);
      expect(statements.some((text) => text.includes('from "call_timeline"'))).toBe(true);
      // Named columns, never `*`: see the next test.
      expect(statements.every((text) => !/select \*/i.test(text))).toBe(true);
    } finally {
      await app.close();
      await db.destroy();
    }
  });

  it('prepares nothing when the pool is configured without them', async () => {
    const { db, app } = await readOneCall(false);
    try {
      expect(await preparedOn(db)).toEqual([]);
    } finally {
      await app.close();
      await db.destroy();
    }
  });

  it('keeps answering reads after a migration adds a column to a table they read', async () => {
    const { db, app, org, callId } = await readOneCall(true);
    try {
      await sql`ALTER TABLE calls ADD COLUMN added_by_a_later_release integer`.execute(database.db);
      const client = app.client(org.key);
      const read = await client.GET('/calls/{id}', { params: { path: { id: callId } } });
      expect(read.response.status).toBe(200);
      expect(read.data!.data.id).toBe(callId);
      expect((await client.GET('/calls', {})).response.status).toBe(200);
    } finally {
      await sql`ALTER TABLE calls DROP COLUMN IF EXISTS added_by_a_later_release`.execute(database.db);
      await app.close();
      await db.destroy();
    }
  });

  it('runs a statement unnamed once a migration changed its result columns', async () => {
    await sql`CREATE TABLE stale_probe (n integer NOT NULL)`.execute(database.db);
    await sql`INSERT INTO stale_probe VALUES (7)`.execute(database.db);
    // `*` on purpose: the result columns follow the table.
    const probe = prepareQuery(
      (_db, arg: Arg<{ limit: number }>) => sql<{ n: number }>`SELECT * FROM stale_probe LIMIT ${arg('limit')}`,
    );
    const first = connectDatabase(database.url, { poolSize: 1, namedStatements: true }).db;
    const second = connectDatabase(database.url, { poolSize: 1, namedStatements: true }).db;
    try {
      expect(await probe.execute(first, { limit: 5 })).toEqual([{ n: 7 }]);
      expect(await probe.execute(second, { limit: 5 })).toEqual([{ n: 7 }]);

      await sql`ALTER TABLE stale_probe ALTER COLUMN n TYPE text`.execute(database.db);
      // Outside a transaction: refused once, then run again unnamed on the same connection.
      expect(await probe.execute(first, { limit: 5 })).toEqual([{ n: '7' }]);
      expect(await probe.execute(first, { limit: 5 })).toEqual([{ n: '7' }]);

      // Inside one: the transaction is lost, and the failure reads as a database that cannot answer now.
      const failure = await second
        .transaction()
        .execute((trx) => probe.execute(trx, { limit: 5 }))
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(databaseFault(failure)).toBe('busy');
      // The connection is still usable, and runs the statement unnamed from now on.
      expect(await second.transaction().execute((trx) => probe.execute(trx, { limit: 5 }))).toEqual([{ n: '7' }]);
    } finally {
      await first.destroy();
      await second.destroy();
      await sql`DROP TABLE stale_probe`.execute(database.db);
    }
  });
});
