// Bad input, derived from the spec's operations: for every operation, requests that each break one
// rule (see support/bad-requests.ts) get a 4xx in the error envelope with the right code, never a 5xx,
// and leave the database exactly as it was. Requests only a raw socket can send (header injection,
// smuggling attempts) get the envelope too, and valid but unusual text is stored exactly as sent.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, requestListener } from '../src/app.js';
import { answerClientErrors } from '../src/http/server.js';
import type { ErrorCode } from '../src/errors.js';
import { STATUS_BY_CODE } from '../src/http/errors.js';
import { badRequestsFor, type BadRequest } from './support/bad-requests.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startTestApp, type TestApp } from './support/app.js';
import type { ErrorResponse } from './support/json.js';
import { snapshotTables } from './support/db-snapshot.js';
import { plainRequest, rawExchange, type RawAnswer } from './support/raw-http.js';
import { createOwnedOrg, exampleBody, operationById, pathIds, type OwnedOrg } from './support/spec-fixtures.js';
import { pathParameterNames } from '../src/conformance/spec/paths.js';
import { publishedOperations as operations } from './support/spec/published.js';
import { answer, startReceiver, testTls, type Receiver } from './support/webhook-receiver.js';

const PLAN = 'bad-input-unlimited';

let database: TestDatabase;
let app: TestApp;
let receiver: Receiver;
let org: OwnedOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  // Hundreds of requests in a few seconds: a plan whose rate limit they cannot reach.
  await database.db
    .insertInto('plans')
    .values({ id: PLAN, name: 'Bad input', rate_limit_per_minute: 1_000_000, active: true })
    .execute();
  receiver = await startReceiver(answer(200));
  // No background workers and a slow simulator: nothing moves on its own, so "unchanged" is exact.
  app = await startTestApp(database, {
    workers: false,
    config: {
      simulatorStepMs: 600_000,
      webhookPrivateAllowlist: ['127.0.0.0/8'],
      webhookCaCerts: [(await testTls()).caCert],
    },
  });
  org = await createOwnedOrg(app, database.db, receiver.url, 'bad-input', PLAN);
});

afterAll(async () => {
  await app?.close();
  await receiver?.close();
  await database?.drop();
});

/** What is wrong with an answer to a bad request, or null when it is the expected error envelope. */
function problemWith(
  status: number,
  text: string,
  requestId: string | null | undefined,
  code: ErrorCode,
): string | null {
  if (status < 400 || status >= 500) return `status ${status}: ${text.slice(0, 300)}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `status ${status} with a body that is not JSON: ${text.slice(0, 200)}`;
  }
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;
  const error = isObject(body) ? body.error : undefined;
  if (!isObject(body) || Object.keys(body).join() !== 'error' || !isObject(error) || typeof error.message !== 'string')
    return `not the envelope: ${text.slice(0, 200)}`;
  if (Object.keys(error).some((key) => !['code', 'message', 'param', 'details'].includes(key)))
    return `unexpected fields: ${text.slice(0, 200)}`;
  if (error.code !== code) return `code ${JSON.stringify(error.code)} (${status}), expected ${code}: ${error.message}`;
  if (STATUS_BY_CODE[code] !== status) return `status ${status} for ${code}`;
  if (!requestId?.startsWith('req_')) return 'no Request-Id header';
  return null;
}

async function send(request: BadRequest): Promise<string | null> {
  const response = await plainRequest(`${app.apiUrl}${request.path}`, request);
  return problemWith(
    response.status,
    response.text,
    response.headers['request-id'] as string | undefined,
    request.code,
  );
}

/** Runs `work` over `items`, `width` at a time. */
async function inBatches<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += width) await Promise.all(items.slice(i, i + width).map(work));
}

describe('bad input to every operation', () => {
  it(
    'gets a 4xx in the envelope with the right code, and the database is unchanged',
    { timeout: 120_000 },
    async () => {
      const requests = operations.flatMap((operation) => {
        const pathValues = pathIds(
          operation,
          Object.fromEntries(pathParameterNames(operation.path).map((name) => [name, org])),
        );
        const body = exampleBody(operation, org);
        return badRequestsFor({ operation, pathValues, key: org.key, ...(body ? { body } : {}) });
      });
      const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();
      const before = await snapshotTables(database.db);

      const failures: string[] = [];
      await inBatches(requests, 8, async (request) => {
        const problem = await send(request);
        if (problem) failures.push(`${request.label} -> ${problem}`);
      });

      expect(failures).toEqual([]);
      expect(await snapshotTables(database.db)).toEqual(before);
      // No __proto__ or constructor.prototype field reached an object's prototype in this (the server's) process.
      expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeKeys);
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
      expect((await fetch(`${app.baseUrl}/healthz`)).status).toBe(200);
      const perOperation = operations.map(
        (operation) => `${operation.id} ${requests.filter((r) => r.label.startsWith(`${operation.id}:`)).length}`,
      );
      console.info(
        `bad inputs tried: ${requests.length} over ${operations.length} operations (${perOperation.join(', ')})`,
      );
    },
  );
});

describe('requests only a raw socket can send', () => {
  let server: http.Server;
  let port: number;

  beforeAll(async () => {
    // Built the way src/main.ts builds the production server.
    server = http.createServer(requestListener(await createApp(app.deps)));
    answerClientErrors(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const post = (headers: string, body = '{}', extra = `Content-Length: ${Buffer.byteLength(body)}\r\n`) =>
    `POST /api/v1/calls HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${org.key}\r\nContent-Type: application/json\r\n${headers}${extra}\r\n${body}`;

  const cases: Array<[string, () => string]> = [
    ['a bare LF inside Idempotency-Key', () => post('Idempotency-Key: a\nX-Injected: 1\r\n')],
    ['a bare CR inside Idempotency-Key', () => post('Idempotency-Key: a\rX-Injected: 1\r\n')],
    ['a NUL inside Idempotency-Key', () => post('Idempotency-Key: a\u0000b\r\n')],
    ['a folded (obs-fold) header line', () => post('Idempotency-Key: a\r\n b\r\n')],
    ['a header line without a name', () => post(': x\r\n')],
    ['20,000 bytes of headers', () => post(`Idempotency-Key: ${'k'.repeat(20_000)}\r\n`)],
    [
      'Content-Length and Transfer-Encoding together',
      () => post('Transfer-Encoding: chunked\r\n', '2\r\n{}\r\n0\r\n\r\n', 'Content-Length: 2\r\n'),
    ],
    ['two different Content-Length headers', () => post('', '{}', 'Content-Length: 2\r\nContent-Length: 3\r\n')],
    ['a chunk size that is not hex', () => post('Transfer-Encoding: chunked\r\n', 'zz\r\n{}\r\n0\r\n\r\n', '')],
    ['a space inside the request target', () => `GET /api/v1/ca lls HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`],
    ['an unknown HTTP version', () => `GET /api/v1/calls HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n`],
    [
      'a request line of 20,000 bytes',
      () => `GET /api/v1/calls?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    ],
    [
      'a chunked body over 64 KiB',
      () => {
        const chunk = 'x'.repeat(16 * 1024);
        const chunks = `{"to_e164":"${chunk}`.concat(chunk.repeat(4), '"}');
        return post('Transfer-Encoding: chunked\r\n', `${chunks.length.toString(16)}\r\n${chunks}\r\n0\r\n\r\n`, '');
      },
    ],
  ];

  it.each(cases)('%s gets 400 invalid_request in the envelope and changes nothing', async (_label, request) => {
    const before = await snapshotTables(database.db);
    const answer: RawAnswer = await rawExchange(port, request());
    expect(problemWith(answer.status, answer.body, answer.headers['request-id'], 'invalid_request')).toBeNull();
    expect(await snapshotTables(database.db)).toEqual(before);
  });

  it('takes an empty chunked body on an operation without one as no body, and refuses one of a byte', async () => {
    const cancel = (body: string) =>
      `POST /api/v1/calls/${randomUUID()}/cancel HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${org.key}\r\nTransfer-Encoding: chunked\r\n\r\n${body}`;
    const empty = await rawExchange(port, cancel('0\r\n\r\n'));
    expect(problemWith(empty.status, empty.body, empty.headers['request-id'], 'not_found')).toBeNull();
    const oneByte = await rawExchange(port, cancel('1\r\n \r\n0\r\n\r\n'));
    expect(problemWith(oneByte.status, oneByte.body, oneByte.headers['request-id'], 'invalid_request')).toBeNull();
    expect((JSON.parse(oneByte.body) as ErrorResponse).error.param).toBe('body');
  });

  it('a CRLF inside a header value only ever starts a header of its own, never echoed back', async () => {
    const before = await snapshotTables(database.db);
    const answer = await rawExchange(port, post('Idempotency-Key: a\r\nX-Injected: injected\r\n'));
    // The body `{}` lacks agent_id: the request reaches validation and is refused there.
    expect(problemWith(answer.status, answer.body, answer.headers['request-id'], 'invalid_request')).toBeNull();
    expect(JSON.stringify(answer.headers)).not.toContain('injected');
    expect(await snapshotTables(database.db)).toEqual(before);
  });
});

describe('unusual but valid text', () => {
  const samples = [
    'emoji 😀👩🏽‍💻🇮🇳',
    'RTL override \u202eevil.exe\u202c and isolate \u2067x\u2069',
    'zero-width\u200b\u200c\u200djoiners',
    'combining e\u0301 and precomposed é',
    'outside the BMP 𠜎𝄞',
    'line\u2028and paragraph\u2029separators',
    'quotes " \' ` and backslashes \\ \\\\',
    "SQL ' OR '1'='1; DROP TABLE contacts; --",
    'LIKE wildcards % _ and $$ dollars $$',
  ];

  it('is stored and served back exactly as sent (names and metadata of contacts and calls)', async () => {
    const client = app.client(org.key);
    const metadata = Object.fromEntries(
      samples.map((sample, i) => [`k${i} ${[...sample].slice(0, 20).join('')}`, sample]),
    );
    for (const [i, name] of samples.entries()) {
      const phone = `+9198700${String(i).padStart(5, '0')}`;
      const upsert = await client.POST('/contacts', {
        body: { phone_e164: phone, name, consent_capture: 'manual', metadata },
      });
      expect(upsert.response.status).toBe(201);
      expect(upsert.data!.data.name).toBe(name);
    }
    const listed = await client.GET('/contacts', { params: { query: { limit: 100 } } });
    for (const name of samples) {
      const contact = listed.data!.data.find((item) => item.name === name);
      expect(contact, name).toBeDefined();
      expect(contact!.metadata).toEqual(metadata);
    }
    const placed = await client.POST('/calls', {
      body: { ...exampleBody(operationById('createCall'), org), metadata } as never,
    });
    expect(placed.response.status).toBe(201);
    const call = await client.GET('/calls/{id}', { params: { path: { id: placed.data!.data.id } } });
    expect(call.data!.data.metadata).toEqual(metadata);
  });
});
