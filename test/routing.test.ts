// The API pipeline through real HTTP, for what other files leave out: every operation of the published
// spec is reached by its declared methods alone (405 with an exact Allow header otherwise, 404 for near
// misses), authentication comes before anything else of the request is looked at, and bodies are read
// as sent (each accepted Content-Encoding, the charset, strict UTF-8, the size limit after decoding,
// "no body" apart from "{}").
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { publishedOperations } from './support/spec/published.js';
import { fillPath, pathParameterNames } from '../src/conformance/spec/paths.js';
import { rawExchange } from './support/raw-http.js';
import { jsonBody, parseJson, type ErrorResponse, type Schemas } from './support/json.js';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;

const NIL = '00000000-0000-0000-0000-000000000000';
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  org = await createTestOrg(database.db, { planId: 'scale' });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/**
 * Plain fetch, not app.fetch: under `npm run test:prism` Prism would answer undeclared methods itself.
 * The body comes back parsed when it is JSON, as an error unless the caller declares otherwise.
 */
async function send<T = ErrorResponse>(
  method: string,
  path: string,
  init: Omit<RequestInit, 'headers'> & { headers?: Record<string, string> } = {},
) {
  const response = await fetch(`${app.apiUrl}${path}`, {
    ...init,
    method,
    headers: { Authorization: `Bearer ${org.key}`, ...init.headers },
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: (text ? JSON.parse(text) : null) as T };
}

/** Whether an answer is the router's own 404 (no route), not an operation's (no such resource names its param). */
const isRoutingNotFound = (answer: { status: number; body: ErrorResponse | null }) =>
  answer.status === 404 && answer.body?.error?.code === 'not_found' && answer.body.error.param === undefined;

describe('routing', () => {
  const templates = [...new Set(publishedOperations.map((operation) => operation.path))];

  it('reaches every operation by its declared methods, and answers 405 with an exact Allow for the others', async () => {
    let reached = 0;
    for (const template of templates) {
      const path = fillPath(template, Object.fromEntries(pathParameterNames(template).map((name) => [name, NIL])));
      const declared = METHODS.filter((method) =>
        publishedOperations.some((operation) => operation.path === template && operation.method === method),
      );
      for (const method of METHODS) {
        const answer = await send(method, path);
        if (declared.includes(method)) {
          expect(answer.status, `${method} ${path}`).not.toBe(405);
          expect(isRoutingNotFound(answer), `${method} ${path}`).toBe(false);
          reached += 1;
        } else {
          expect(answer.status, `${method} ${path}`).toBe(405);
          expect(answer.body.error.code).toBe('method_not_allowed');
          expect(answer.headers.get('allow'), `${method} ${path}`).toBe(declared.join(', '));
        }
      }
    }
    expect(reached).toBe(publishedOperations.length);
  });

  it('answers 404 not_found to near misses of every path, outside the API root and beside it', async () => {
    const nearMisses = [
      ...templates.map(
        (template) =>
          `${fillPath(template, Object.fromEntries(pathParameterNames(template).map((name) => [name, NIL])))}/extra/more`,
      ),
      '',
      '/',
      '/nope',
    ].map((path) => `${app.apiUrl}${path}`);
    const origin = new URL(app.apiUrl).origin;
    nearMisses.push(
      `${origin}/calls`,
      `${origin}/api/v1x/calls`,
      `${origin}/api/calls`,
      `${origin}/nope`,
      `${origin}/api/v1/CALLS`,
      `${origin}/API/V1/calls`,
    );
    for (const url of nearMisses) {
      for (const method of ['GET', 'POST']) {
        const response = await fetch(url, { method, headers: { Authorization: `Bearer ${org.key}` } });
        const answer = { status: response.status, body: await jsonBody<ErrorResponse>(response) };
        expect(isRoutingNotFound(answer), `${method} ${url}: ${answer.status}`).toBe(true);
      }
    }
  });

  it('authenticates before looking at a path id: a malformed escape is 401 without a key, 400 naming its parameter with one', async () => {
    const path = `/webhooks/${NIL}/deliveries/%E0%A4%A/redeliver`;
    const anonymous = await send('POST', path, { headers: { Authorization: '' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('unauthorized');

    const known = await send('POST', path);
    expect(known.status).toBe(400);
    expect(known.body.error).toMatchObject({ code: 'invalid_request', param: 'delivery_id' });
    expect(known.headers.get('x-ratelimit-remaining')).toMatch(/^[0-9]+$/);
  });
});

describe('request bodies', () => {
  const contact = (phone: string, name = 'Asha') =>
    JSON.stringify({ phone_e164: phone, name, consent_capture: 'manual' });
  const json = (extra: Record<string, string> = {}) => ({ 'Content-Type': 'application/json', ...extra });

  it('refuses a body that is not a JSON object, even a string holding one', async () => {
    for (const body of [JSON.stringify(contact('+919813000100')), '42', 'true']) {
      const answer = await send('POST', '/contacts', { headers: json(), body });
      expect(answer.status, body).toBe(400);
      expect(answer.body.error, body).toMatchObject({ code: 'invalid_request', param: 'body' });
    }
    const listed = await send<Schemas['ContactList']>('GET', '/contacts?limit=100');
    expect(listed.body.data.some((item) => item.phone_e164 === '+919813000100')).toBe(false);
  });

  it('accepts each supported Content-Encoding and refuses what decodes to more than 64 KiB', async () => {
    const encoders: Array<[string, (text: string) => Buffer]> = [
      ['gzip', (text) => gzipSync(text)],
      ['deflate', (text) => deflateSync(text)],
      ['br', (text) => brotliCompressSync(text)],
      ['identity', (text) => Buffer.from(text)],
    ];
    for (const [index, [encoding, encode]] of encoders.entries()) {
      const answer = await send<Schemas['ContactResponse']>('POST', '/contacts', {
        headers: json({ 'Content-Encoding': encoding }),
        body: new Uint8Array(encode(contact(`+91981300000${index}`))),
      });
      expect(answer.status, encoding).toBe(201);
      expect(answer.body.data.phone_e164).toBe(`+91981300000${index}`);
    }

    const bomb = gzipSync(contact('+919813000009', 'x'.repeat(70_000)));
    expect(bomb.length).toBeLessThan(1024);
    const refused = await send('POST', '/contacts', {
      headers: json({ 'Content-Encoding': 'gzip' }),
      body: new Uint8Array(bomb),
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_request', param: 'body' });
    expect(refused.body.error.message).toBe('body: exceeds the 64 KiB limit');
  });

  it('takes content-codings in any case (RFC 9110 §8.4.1) and still refuses an unknown one with 415', async () => {
    const encoders: Array<[string, (text: string) => Buffer]> = [
      ['GZIP', (text) => gzipSync(text)],
      ['Deflate', (text) => deflateSync(text)],
      ['BR', (text) => brotliCompressSync(text)],
      ['Identity', (text) => Buffer.from(text)],
    ];
    for (const [index, [encoding, encode]] of encoders.entries()) {
      const answer = await send<Schemas['ContactResponse']>('POST', '/contacts', {
        headers: json({ 'Content-Encoding': encoding }),
        body: new Uint8Array(encode(contact(`+91981330000${index}`))),
      });
      // A new contact each time: 201 Created.
      expect(answer.status, encoding).toBe(201);
      expect(answer.body.data.phone_e164).toBe(`+91981330000${index}`);
    }

    const unknown = await send('POST', '/contacts', {
      headers: json({ 'Content-Encoding': 'X-Zip' }),
      body: contact('+919813300009'),
    });
    expect(unknown.status).toBe(415);
    expect(unknown.body.error).toMatchObject({ code: 'unsupported_media_type', param: 'Content-Encoding' });
  });

  it('takes utf-8 in any spelling as the charset and refuses every other', async () => {
    for (const [index, charset] of ['utf-8', 'UTF-8', 'utf8'].entries()) {
      const answer = await send('POST', '/contacts', {
        headers: { 'Content-Type': `application/json; charset=${charset}` },
        body: contact(`+91981310000${index}`),
      });
      expect(answer.status, charset).toBe(201);
    }
    for (const charset of ['iso-8859-1', 'utf-16', 'x-unknown']) {
      const answer = await send('POST', '/contacts', {
        headers: { 'Content-Type': `application/json; charset=${charset}` },
        body: contact('+919813100009'),
      });
      expect(answer.status, charset).toBe(400);
      expect(answer.body.error).toMatchObject({
        code: 'invalid_request',
        param: 'Content-Type',
        message: 'Content-Type: the charset must be utf-8',
      });
    }
  });

  it('decodes strict UTF-8: a replacement character sent as such is text, and a leading byte order mark is skipped', async () => {
    const replacement = await send<Schemas['ContactResponse']>('POST', '/contacts', {
      headers: json(),
      body: contact('+919813200001', 'Jos\uFFFD'),
    });
    expect(replacement.status).toBe(201);
    expect(replacement.body.data.name).toBe('Jos\uFFFD');

    const marked = await send('POST', '/contacts', {
      headers: json(),
      body: new Uint8Array(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(contact('+919813200002'))])),
    });
    expect(marked.status).toBe(201);

    const truncated = await send('POST', '/contacts', {
      headers: json(),
      body: new Uint8Array(Buffer.concat([Buffer.from(contact('+919813200003', 'Jos')), Buffer.from([0xe0, 0xa4])])),
    });
    expect(truncated.status).toBe(400);
    expect(truncated.body.error).toMatchObject({ param: 'body', message: 'body: is not valid UTF-8' });
  });

  it('tells a missing body from an empty object, and an empty chunked body from both', async () => {
    const missing = await send('POST', '/contacts', { headers: json() });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'invalid_request', param: 'body' });

    const empty = await send('POST', '/contacts', { headers: json(), body: '{}' });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ code: 'invalid_request', param: 'phone_e164' });

    const chunked = await rawExchange(
      Number(new URL(app.baseUrl).port),
      `POST /api/v1/contacts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\n` +
        'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    );
    expect(chunked.status).toBe(400);
    expect(parseJson<ErrorResponse>(chunked.body).error).toMatchObject({
      param: 'body',
      message: 'body: is not valid JSON',
    });
  });
});
