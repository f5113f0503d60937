// Isolation between orgs, and between an org's live and test modes, derived from the spec's operations
// (a new operation is covered without a new test): every path id, body id and query id (a filter such
// as campaign_id) of another org, or of the other mode, is answered exactly like an unknown id (404
// not_found, never 403, never any of its data) and changes nothing; every list shows only the caller's
// rows, under its own query ids too; writes without ids never touch
// the other side's rows, even on its natural keys (the same Idempotency-Key included). Agents are the
// one thing an org's two modes share.
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
  createOwnedTestMode,
  exampleBody,
  ownPath,
  pathIds,
  QUERY_FIXTURES,
  queryIdParameters,
  sendOperation,
  type OwnedOrg,
} from './support/spec-fixtures.js';
import { answer, startReceiver, testTls, type Receiver } from './support/webhook-receiver.js';

let database: TestDatabase;
let app: TestApp;
let receiver: Receiver;
let a: OwnedOrg;
let b: OwnedOrg;
/** Org A in test mode: its test twin's resources, made with a test key. */
let aTest: OwnedOrg;

const send = <T = unknown>(
  operation: SpecOperation,
  caller: OwnedOrg,
  path: string,
  body?: unknown,
  idempotencyKey?: string,
) => sendOperation<T>(app, operation, caller, path, body, idempotencyKey);

/**
 * The ids `caller` must never see of `other`: every id-like value (UUIDs, evt_ ids) in the rows of
 * `other`'s org, from every table with an org_id column, but those the caller may see as its own (an
 * org's modes share its agents).
 */
async function foreignIds(caller: OwnedOrg, other: OwnedOrg): Promise<Set<string>> {
  const own = await idsOf(caller.orgId);
  return new Set([...(await idsOf(other.orgId))].filter((id) => !own.has(id) && id !== caller.agentId));
}

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
  // The same fixture name: its call is placed with the Idempotency-Key of A's live call.
  aTest = await createOwnedTestMode(app, database.db, a, `${receiver.url}/a-test`, 'a');
});

afterAll(async () => {
  await app?.close();
  await receiver?.close();
  await database?.drop();
});

const withPathIds = operations.filter((candidate) => pathParameterNames(candidate.path).length > 0);

/** Who calls (`a`) and whose ids it tries (`b`): another org, or the same org's other mode. */
const pairs: Array<{ name: string; sharesAgents: boolean; sides: () => { a: OwnedOrg; b: OwnedOrg } }> = [
  { name: "another org's", sharesAgents: false, sides: () => ({ a, b }) },
  { name: "a test key on the org's live", sharesAgents: true, sides: () => ({ a: aTest, b: a }) },
  { name: "a live key on the org's test", sharesAgents: true, sides: () => ({ a, b: aTest }) },
];

for (const pair of pairs) {
  describe(`${pair.name}: ids in the path`, () => {
    it('the spec has operations with path ids to check', () => {
      expect(withPathIds.length).toBeGreaterThan(0);
    });

    for (const target of withPathIds) {
      it(`${target.id} (${target.method} ${target.path}): 404 not_found for the other side's ids, nothing changes`, async () => {
        const { a, b } = pair.sides();
        const all = (owner: OwnedOrg) =>
          pathIds(target, Object.fromEntries(pathParameterNames(target.path).map((name) => [name, owner])));
        // A parameter whose id both sides own (the agent of an org's two modes) is not foreign.
        const names = pathParameterNames(target.path).filter((name) => all(a)[name] !== all(b)[name]);
        if (names.length === 0) {
          expect(pair.sharesAgents, `${target.id} has no foreign id to try`).toBe(true);
          return;
        }
        const bIds = await foreignIds(a, b);
        const before = await snapshotTables(database.db);
        // Every non-empty set of the foreign parameters holds B's id, the others A's own.
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

  describe(`${pair.name}: ids in request bodies`, () => {
    const withBodyIds = operations.filter((candidate) =>
      Object.values(candidate.body?.schema.properties ?? {}).some((property) => property.format === 'uuid'),
    );
    for (const target of withBodyIds) {
      it(`${target.id}: the other side's ids in the body are not_found, nothing changes`, async () => {
        const { a, b } = pair.sides();
        const bIds = await foreignIds(a, b);
        const before = await snapshotTables(database.db);
        let checked = 0;
        for (const [field, property] of Object.entries(target.body!.schema.properties ?? {})) {
          if (property.format !== 'uuid') continue;
          const fixture = BODY_FIXTURES[field];
          if (!fixture) throw new Error(`${target.id}: no fixture for body field "${field}"; add one to BODY_FIXTURES`);
          // An id both sides own (the agent of an org's two modes) is not foreign.
          if (fixture(a) === fixture(b)) continue;
          checked += 1;
          const body = { ...exampleBody(target, a), [field]: fixture(b) };
          const response = await send<ErrorResponse>(target, a, fillPath(target.path, {}), body);
          expectNotFound(response, `${target.id} ${field}`, new Set([...bIds].filter((id) => id !== fixture(b))));
          expect(response.body.error.param).toBe(field);
        }
        expect(await snapshotTables(database.db)).toEqual(before);
        expect(checked > 0 || pair.sharesAgents, 'a foreign body id was checked').toBe(true);
      });
    }
  });

  describe(`${pair.name}: ids in query parameters`, () => {
    const withQueryIds = operations.filter((candidate) => queryIdParameters(candidate).length > 0);

    it('the spec has operations with query ids to check', () => {
      expect(withQueryIds.length).toBeGreaterThan(0);
    });

    for (const target of withQueryIds) {
      it(`${target.id}: the other side's ids in the query are not_found naming the parameter, nothing changes`, async () => {
        const { a, b } = pair.sides();
        const bIds = await foreignIds(a, b);
        const before = await snapshotTables(database.db);
        for (const name of queryIdParameters(target)) {
          const fixture = QUERY_FIXTURES[name];
          if (!fixture)
            throw new Error(`${target.id}: no fixture for query parameter "${name}"; add one to QUERY_FIXTURES`);
          const path = `${ownPath(target, a)}?${name}=${fixture(b)}`;
          const response = await send<ErrorResponse>(target, a, path, exampleBody(target, a));
          expectNotFound(response, `${target.method} ${path}`, new Set([...bIds].filter((id) => id !== fixture(b))));
          expect(response.body.error.param).toBe(name);
          // The caller's own id is answered, so the 404 is about ownership.
          const own = await send(target, a, `${ownPath(target, a)}?${name}=${fixture(a)}`, exampleBody(target, a));
          expect(own.status, `${target.id} ${name}: ${JSON.stringify(own.body)}`).toBeGreaterThanOrEqual(200);
          expect(own.status).toBeLessThan(300);
        }
        expect(await snapshotTables(database.db)).toEqual(before);
      });
    }
  });

  describe(`${pair.name}: lists`, () => {
    const lists = operations.filter((candidate) => candidate.isList);

    it('the spec has list operations to check', () => {
      expect(lists.length).toBeGreaterThan(0);
    });

    for (const target of lists) {
      it(`${target.id} shows the caller only its own rows, under every filter value`, async () => {
        const { a, b } = pair.sides();
        const bIds = await foreignIds(a, b);
        const aIds = await idsOf(a.orgId);
        // The agents list shows the org's agents in both modes: the caller's own, whatever its mode.
        if (pair.sharesAgents) aIds.add(a.agentId);
        const base = ownPath(target, a);
        const queries = ['limit=100'];
        for (const parameter of target.parameters) {
          for (const value of parameter.in === 'query' ? ((parameter.schema.enum as string[] | undefined) ?? []) : []) {
            queries.push(`limit=100&${parameter.name}=${encodeURIComponent(value)}`);
          }
        }
        for (const name of queryIdParameters(target)) queries.push(`limit=100&${name}=${QUERY_FIXTURES[name]!(a)}`);
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

  describe(`${pair.name}: writes without ids`, () => {
    const writes = operations.filter(
      (candidate) => candidate.method !== 'GET' && pathParameterNames(candidate.path).length === 0,
    );

    for (const target of writes) {
      it(`${target.id} with the same body and natural keys (Idempotency-Key included) as the other side's leaves every row of it unchanged`, async () => {
        const { a, b } = pair.sides();
        const before = await snapshotTables(database.db, b.orgId);
        const response = await send(target, a, fillPath(target.path, {}), exampleBody(target, a), b.idempotencyKey);
        expect(response.status, JSON.stringify(response.body)).toBeGreaterThanOrEqual(200);
        expect(response.status).toBeLessThan(300);
        expect(await snapshotTables(database.db, b.orgId)).toEqual(before);
      });
    }
  });
}

// Last: it deletes org A's endpoint, which the checks above use.
describe("the same requests with the caller's own ids", () => {
  it.each([
    ['live', () => a],
    ['test', () => aTest],
  ])('succeed in %s mode, so the 404s above are about ownership', async (_, caller) => {
    const a = caller();
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
