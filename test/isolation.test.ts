// Isolation between orgs, derived from the spec's operations (a new operation is covered without a
// new test): every path id and body id of another org is answered exactly like an unknown id (404
// not_found, never 403, never any of its data) and changes nothing; every list shows only the
// caller's rows; writes without ids never touch the other org's rows, even on its natural keys.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startTestApp, type TestApp } from './support/app.js';
import type { ErrorResponse } from './support/json.js';
import { snapshotTables } from './support/db-snapshot.js';
import type { Operation as SpecOperation } from '../src/conformance/spec/operations.js';
import { fillPath, pathParameterNames } from '../src/conformance/spec/paths.js';
import { publishedOperations as operations } from './support/spec/published.js';
import {
  BODY_FIXTURES,
  createOwnedOrg,
  exampleBody,
  ownPath,
  pathIds,
  sendOperation,
  type OwnedOrg,
} from './support/spec-fixtures.js';
import { answer, startReceiver, testTls, type Receiver } from './support/webhook-receiver.js';

let database: TestDatabase;
let app: TestApp;
let receiver: Receiver;
let a: OwnedOrg;
let b: OwnedOrg;

const send = <T = unknown>(
  operation: SpecOperation,
  caller: OwnedOrg,
  path: string,
  body?: unknown,
  idempotencyKey?: string,
) => sendOperation<T>(app, operation, caller, path, body, idempotencyKey);

/** Every id-like value (UUIDs, evt_ ids) in the rows of `orgId`, from every table with an org_id column. */
async function idsOf(orgId: string): Promise<Set<string>> {
  const { rows: tables } = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'org_id'`.execute(
    database.db,
  );
  const ids = new Set<string>();
  for (const { table_name: table } of tables) {
    const { rows } = await sql<
      Record<string, unknown>
    >`SELECT * FROM ${sql.table(table)} WHERE org_id = ${orgId}::uuid`.execute(database.db);
    for (const value of rows.flatMap((row) => Object.values(row))) {
      if (typeof value === 'string' && value !== orgId && /^([0-9a-f-]{36}|evt_\w+)$/.test(value)) ids.add(value);
    }
  }
  return ids;
}

function stringsIn(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string') found.push(value);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) stringsIn(item, found);
  return found;
}

function expectNotFound(response: { status: number; body: ErrorResponse }, what: string, leaked: Set<string>) {
  expect(response.status, what).toBe(404);
  expect(Object.keys(response.body), what).toEqual(['error']);
  expect(response.body.error.code, what).toBe('not_found');
  expect(
    Object.keys(response.body.error).every((key) => ['code', 'message', 'param'].includes(key)),
    what,
  ).toBe(true);
  for (const value of stringsIn(response.body)) for (const id of leaked) expect(value, what).not.toContain(id);
}

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await startReceiver(answer(200));
  // No background workers and a slow simulator: nothing moves on its own, so "nothing changed" is exact.
  app = await startTestApp(database, {
    workers: false,
    config: {
      simulatorStepMs: 600_000,
      webhookPrivateAllowlist: ['127.0.0.0/8'],
      webhookCaCerts: [(await testTls()).caCert],
    },
  });
  a = await createOwnedOrg(app, database.db, `${receiver.url}/a`, 'a');
  b = await createOwnedOrg(app, database.db, `${receiver.url}/b`, 'b');
});

afterAll(async () => {
  await app?.close();
  await receiver?.close();
  await database?.drop();
});

const withPathIds = operations.filter((candidate) => pathParameterNames(candidate.path).length > 0);

describe("another org's ids in the path", () => {
  it('the spec has operations with path ids to check', () => {
    expect(withPathIds.length).toBeGreaterThan(0);
  });

  for (const target of withPathIds) {
    it(`${target.id} (${target.method} ${target.path}): 404 not_found for org B's ids, nothing changes`, async () => {
      const names = pathParameterNames(target.path);
      const bIds = await idsOf(b.orgId);
      const before = await snapshotTables(database.db);
      // Every non-empty set of the parameters holds B's id, the others A's own.
      for (let mask = 1; mask < 1 << names.length; mask += 1) {
        const owners = Object.fromEntries(names.map((name, i) => [name, mask & (1 << i) ? b : a]));
        const path = fillPath(target.path, pathIds(target, owners));
        const response = await send<ErrorResponse>(target, a, path, exampleBody(target, a));
        expectNotFound(response, `${target.method} ${path}`, bIds);
      }
      expect(await snapshotTables(database.db)).toEqual(before);
    });
  }
});

describe("another org's ids in request bodies", () => {
  const withBodyIds = operations.filter((candidate) =>
    Object.values(candidate.body?.schema.properties ?? {}).some((property) => property.format === 'uuid'),
  );
  for (const target of withBodyIds) {
    it(`${target.id}: org B's ids in the body are not_found, nothing changes`, async () => {
      const bIds = await idsOf(b.orgId);
      const before = await snapshotTables(database.db);
      for (const [field, property] of Object.entries(target.body!.schema.properties ?? {})) {
        if (property.format !== 'uuid') continue;
        const fixture = BODY_FIXTURES[field];
        if (!fixture) throw new Error(`${target.id}: no fixture for body field "${field}"; add one to BODY_FIXTURES`);
        const body = { ...exampleBody(target, a), [field]: fixture(b) };
        const response = await send<ErrorResponse>(target, a, fillPath(target.path, {}), body);
        expectNotFound(response, `${target.id} ${field}`, new Set([...bIds].filter((id) => id !== fixture(b))));
        expect(response.body.error.param).toBe(field);
      }
      expect(await snapshotTables(database.db)).toEqual(before);
    });
  }
});

describe('lists', () => {
  const lists = operations.filter((candidate) => candidate.isList);

  it('the spec has list operations to check', () => {
    expect(lists.length).toBeGreaterThan(0);
  });

  for (const target of lists) {
    it(`${target.id} shows org A only its own rows, under every filter value`, async () => {
      const bIds = await idsOf(b.orgId);
      const aIds = await idsOf(a.orgId);
      const base = ownPath(target, a);
      const queries = ['limit=100'];
      for (const parameter of target.parameters) {
        for (const value of parameter.in === 'query' ? ((parameter.schema.enum as string[] | undefined) ?? []) : []) {
          queries.push(`limit=100&${parameter.name}=${encodeURIComponent(value)}`);
        }
      }
      let ownSeen = 0;
      for (const query of queries) {
        const response = await send<{ data: unknown }>(target, a, `${base}?${query}`);
        expect(response.status, query).toBe(200);
        const values = stringsIn(response.body.data);
        expect(
          values.filter((value) => bIds.has(value)),
          query,
        ).toEqual([]);
        ownSeen += values.filter((value) => aIds.has(value)).length;
      }
      // The list is not trivially empty: org A's own rows are there.
      expect(ownSeen).toBeGreaterThan(0);
    });
  }
});

describe('writes without ids', () => {
  const writes = operations.filter(
    (candidate) => candidate.method !== 'GET' && pathParameterNames(candidate.path).length === 0,
  );

  for (const target of writes) {
    it(`${target.id} with the same body and natural keys (Idempotency-Key included) as org B's leaves every row of B unchanged`, async () => {
      const before = await snapshotTables(database.db, b.orgId);
      const response = await send(target, a, fillPath(target.path, {}), exampleBody(target, a), b.idempotencyKey);
      expect(response.status, JSON.stringify(response.body)).toBeGreaterThanOrEqual(200);
      expect(response.status).toBeLessThan(300);
      expect(await snapshotTables(database.db, b.orgId)).toEqual(before);
    });
  }
});

// Last: it deletes org A's endpoint, which the checks above use.
describe("the same requests with the caller's own ids", () => {
  it('succeed, so the 404s above are about ownership', async () => {
    // Deletions last: they remove what the others need.
    const ordered = [...withPathIds].sort((x, y) => Number(x.method === 'DELETE') - Number(y.method === 'DELETE'));
    for (const target of ordered) {
      const path = ownPath(target, a);
      const response = await send(target, a, path, exampleBody(target, a));
      expect(response.status, `${target.method} ${path}: ${JSON.stringify(response.body)}`).toBeGreaterThanOrEqual(200);
      expect(response.status, `${target.method} ${path}`).toBeLessThan(300);
    }
  });
});
