// The statuses every operation declares but no feature test reaches: 429 over the rate limit, 500 on an
// unexpected failure, 503 when the database does not answer, and for operations with a body 408 for a
// body sent too slowly and 415 for an unknown Content-Encoding, each in the error envelope, for every
// operation of the spec.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, rawRequest, startTestApp, type TestApp } from './support/app.js';
import type { ErrorResponse } from './support/json.js';
import { connectDatabase } from '../src/database/connect.js';
import { resolve } from '../src/conformance/spec/document.js';
import type { Operation } from '../src/conformance/spec/operations.js';
import { fillPath } from '../src/conformance/spec/paths.js';
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
        const response = await rawRequest<ErrorResponse>(app, operation.method, path, init);
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
        expect(response.body, operation.id).toEqual({
          error: { code: 'internal_error', message: expect.any(String) as unknown },
        });
      }
    } finally {
      await app.close();
    }
  });

  it('answers 503 service_unavailable with Retry-After when the database cannot be reached', async () => {
    const org = await createTestOrg(database.db);
    // A port nothing listens on: every connection is refused.
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const url = `postgres://postgres@127.0.0.1:${port}/nowhere`;
    const { db } = connectDatabase(url, { poolSize: 2, connectTimeoutMs: 500 });
    const app = await startTestApp({ db, url }, { workers: false });
    try {
      for (const operation of operations) {
        const { path, init } = exampleRequest(operation, org.key);
        const response = await rawRequest<ErrorResponse>(app, operation.method, path, init);
        expect(response.status, operation.id).toBe(503);
        expect(response.body.error.code, operation.id).toBe('service_unavailable');
        expect(Number(response.headers.get('retry-after')), operation.id).toBeGreaterThanOrEqual(1);
      }
    } finally {
      await app.close();
      await db.destroy();
    }
  });

  it('answers 415 for an unknown Content-Encoding and 408 for a body too slow, where a body is taken', async () => {
    const org = await createTestOrg(database.db, { planId: 'scale' });
    const app = await startTestApp(database, { workers: false, config: { bodyTimeoutMs: 300 } });
    const port = Number(new URL(app.baseUrl).port);
    try {
      const withBody = operations.filter((operation) => exampleRequest(operation, org.key).init.body !== undefined);
      expect(withBody.length).toBeGreaterThan(0);
      for (const operation of withBody) {
        const { path, init } = exampleRequest(operation, org.key);
        const encoded = await rawRequest<ErrorResponse>(app, operation.method, path, {
          ...init,
          headers: { ...init.headers, 'Content-Encoding': 'zstd' },
        });
        expect(encoded.status, operation.id).toBe(415);
        expect(encoded.body.error.code, operation.id).toBe('unsupported_media_type');

        const socket = net.connect(port, '127.0.0.1');
        let answer = '';
        socket.on('data', (chunk) => (answer += chunk.toString()));
        const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
        const head = Object.entries({ ...init.headers, Host: 'x', 'Content-Length': '1000' })
          .map(([name, value]) => `${name}: ${value}`)
          .join('\r\n');
        socket.write(`${operation.method} /api/v1${path} HTTP/1.1\r\n${head}\r\n\r\n{`);
        await ended;
        expect(answer, operation.id).toMatch(/^HTTP\/1\.1 408 /);
        expect(answer, operation.id).toContain('"code":"request_timeout"');
      }
    } finally {
      await app.close();
    }
  });
});
