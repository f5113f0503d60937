// The statuses every operation declares but no feature test reaches: 429 over the rate limit and 500
// when the database fails, each in the error envelope, for every operation of the spec.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, rawRequest, startTestApp, type TestApp } from './support/app.js';
import { connectDatabase } from '../src/database/connect.js';
import { resolve } from './support/spec/document.js';
import type { Operation } from './support/spec/operations.js';
import { fillPath } from './support/spec/paths.js';
import { publishedOperations as operations, publishedSpec as document } from './support/spec/published.js';

/** A request the spec calls valid: path examples and the first request-body example. */
function exampleRequest(operation: Operation, key: string) {
  const raw = (document.paths![operation.path]![operation.method.toLowerCase()] as Record<string, unknown>) ?? {};
  const parameters = [...((raw.parameters as unknown[]) ?? [])].map((parameter) =>
    resolve<Record<string, unknown>>(document, parameter),
  );
  const values = Object.fromEntries(
    parameters.filter((p) => p.in === 'path').map((p) => [p.name as string, String(p.example)]),
  );
  const content = (
    resolve<Record<string, unknown>>(document, raw.requestBody ?? {}).content as
      Record<string, { examples?: Record<string, { value: unknown }> }> | undefined
  )?.['application/json'];
  const example = content?.examples && Object.values(content.examples)[0]?.value;
  return {
    path: fillPath(operation.path, values),
    init: {
      headers: { Authorization: `Bearer ${key}`, ...(example ? { 'Content-Type': 'application/json' } : {}) },
      ...(example ? { body: JSON.stringify(example) } : {}),
    },
  };
}

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

describe('every operation', () => {
  it('answers 429 too_many_requests with Retry-After once the org is over its limit', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const app = await startTestApp(database, { workers: false, clock });
    try {
      const org = await createTestOrg(database.db);
      for (let i = 0; i < 120; i += 1) {
        expect(
          (await rawRequest(app, 'GET', '/contacts?limit=1', { headers: { Authorization: `Bearer ${org.key}` } }))
            .status,
        ).toBe(200);
      }
      for (const operation of operations) {
        const { path, init } = exampleRequest(operation, org.key);
        const response = await rawRequest(app, operation.method, path, init);
        expect(response.status, operation.id).toBe(429);
        expect(response.body.error.code, operation.id).toBe('too_many_requests');
        expect(Number(response.headers.get('retry-after')), operation.id).toBeGreaterThanOrEqual(1);
      }
    } finally {
      await app.close();
    }
  });

  it('answers 500 internal_error, without details, when the database fails', async () => {
    const org = await createTestOrg(database.db);
    const { db } = connectDatabase(database.url, { poolSize: 2 });
    // The key lookup is cached, so requests get past authentication before they need the database.
    const app: TestApp = await startTestApp(
      { db, url: database.url },
      { workers: false, config: { apiKeyCacheTtlMs: 30_000, logLevel: 'silent' } },
    );
    try {
      expect(
        (await rawRequest(app, 'GET', '/contacts', { headers: { Authorization: `Bearer ${org.key}` } })).status,
      ).toBe(200);
      await db.destroy();
      for (const operation of operations) {
        const { path, init } = exampleRequest(operation, org.key);
        const response = await rawRequest(app, operation.method, path, init);
        expect(response.status, operation.id).toBe(500);
        expect(response.body, operation.id).toEqual({ error: { code: 'internal_error', message: expect.any(String) } });
      }
    } finally {
      await app.close();
    }
  });
});
