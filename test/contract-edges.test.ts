// The contract's edges that generated clients lean on, through real HTTP: the headers every answer
// carries (401's challenge included), HEAD beside every GET, trailing slashes, and query integers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import type { ErrorResponse, Schemas } from './support/json.js';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;

const auth = () => ({ Authorization: `Bearer ${org.key}` });
const RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  org = await createTestOrg(database.db);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('headers every answer carries', () => {
  it('401 carries WWW-Authenticate: Bearer and Request-Id, with or without a key', async () => {
    const attempts: Array<Record<string, string>> = [
      {},
      { Authorization: 'Bearer svc_live_nope' },
      { Authorization: 'Basic abc' },
    ];
    for (const headers of attempts) {
      const answer = await rawRequest<ErrorResponse>(app, 'GET', '/calls', { headers });
      expect(answer.status).toBe(401);
      expect(answer.body.error.code).toBe('unauthorized');
      expect(answer.headers.get('www-authenticate')).toBe('Bearer');
      expect(answer.headers.get('request-id')).toMatch(/^req_[0-9a-f]{16}$/);
    }
  });

  it('authenticated errors carry the X-RateLimit-* headers like successes do', async () => {
    const answers = [
      await rawRequest(app, 'GET', '/calls', { headers: auth() }),
      await rawRequest(app, 'GET', '/calls?limit=0', { headers: auth() }),
      await rawRequest(app, 'GET', '/calls/9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d', { headers: auth() }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([200, 400, 404]);
    for (const answer of answers) {
      for (const name of RATE_LIMIT_HEADERS) expect(answer.headers.get(name), name).toMatch(/^[0-9]+$/);
      expect(answer.headers.get('request-id')).toMatch(/^req_/);
    }
  });
});

describe('HEAD beside every GET', () => {
  // Plain fetch, not app.fetch: the spec documents HEAD as a convention of every GET operation
  // rather than as operations of its own, so Prism has nothing to judge it by.
  const head = (path: string, headers: Record<string, string> = auth()) =>
    fetch(`${app.apiUrl}${path}`, { method: 'HEAD', headers });

  it('answers like GET, with the same status and headers and no body', async () => {
    const { publishedOperations } = await import('./support/spec/published.js');
    const gets = publishedOperations.filter((operation) => operation.method === 'GET');
    expect(gets.length).toBeGreaterThan(5);
    for (const operation of gets) {
      const path = operation.path.replace(/\{[^}]+\}/g, '0b7c4a4e-1f0e-4a43-9d1c-2b1d0c6f7a10');
      const got = await fetch(`${app.apiUrl}${path}`, { headers: auth() });
      const headed = await head(path);
      expect(headed.status, `HEAD ${path}`).toBe(got.status);
      expect(await headed.text()).toBe('');
      expect(headed.headers.get('content-type')).toBe(got.headers.get('content-type'));
      expect(headed.headers.get('content-length')).toBe(got.headers.get('content-length'));
      for (const name of ['request-id', ...RATE_LIMIT_HEADERS]) expect(headed.headers.get(name), name).not.toBeNull();
    }
  });

  it('needs a key like GET does', async () => {
    const headed = await head('/calls', {});
    expect(headed.status).toBe(401);
    expect(headed.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('is not allowed where GET is not', async () => {
    const headed = await head('/calls/0b7c4a4e-1f0e-4a43-9d1c-2b1d0c6f7a10/cancel');
    expect(headed.status).toBe(405);
    expect(headed.headers.get('allow')).toBe('POST');
  });
});

describe('trailing slashes', () => {
  const paths = [
    '/calls/',
    '/contacts/',
    '/agents/',
    '/webhooks/',
    '/calls/0b7c4a4e-1f0e-4a43-9d1c-2b1d0c6f7a10/',
    '/webhooks/0b7c4a4e-1f0e-4a43-9d1c-2b1d0c6f7a10/deliveries/',
    '/calls//',
  ];

  it('answer 404 not_found in the error envelope, never a list or another operation', async () => {
    for (const path of paths) {
      for (const method of ['GET', 'POST']) {
        const answer = await rawRequest<ErrorResponse>(app, method, path, { headers: auth() });
        expect(answer.status, `${method} ${path}`).toBe(404);
        expect(answer.body, `${method} ${path}`).toEqual({
          error: expect.objectContaining({ code: 'not_found' }) as unknown,
        });
        expect(answer.headers.get('request-id')).toMatch(/^req_/);
      }
    }
  });

  it('leave the paths without one working', async () => {
    expect((await rawRequest(app, 'GET', '/calls', { headers: auth() })).status).toBe(200);
  });
});

describe('a query parameter given twice', () => {
  it.each([
    ['/calls?status=completed&status=failed', 'status'],
    ['/calls?limit=2&limit=3', 'limit'],
    ['/contacts?limit=5&consent_capture=manual&consent_capture=manual', 'consent_capture'],
  ])('%s is refused, naming it, with what to do', async (path, name) => {
    const answer = await rawRequest<ErrorResponse>(app, 'GET', path, { headers: auth() });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toEqual({
      code: 'invalid_request',
      param: name,
      message: `${name}: is given more than once; give it once`,
      details: { [name]: ['is given more than once; give it once'] },
    });
  });
});

describe('query integers', () => {
  const refused = ['0x10', '1e1', '+5', '5.0', '%205', '5%20', '', '1_0', '٥', 'Infinity', '0b1'];

  it.each(['limit', 'offset'])('%s accepts only decimal digits', async (name) => {
    for (const value of refused) {
      const answer = await rawRequest<ErrorResponse>(app, 'GET', `/calls?${name}=${value}`, { headers: auth() });
      expect(answer.status, `${name}=${value}`).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'invalid_request', param: name });
      expect(answer.body.error.details![name]).toEqual(['must be an integer written in decimal digits']);
    }
  });

  it('refuses them on every list, not only calls', async () => {
    for (const path of ['/contacts', '/agents', '/webhooks']) {
      const answer = await rawRequest<ErrorResponse>(app, 'GET', `${path}?limit=1e1`, { headers: auth() });
      expect(answer.status, path).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'invalid_request', param: 'limit' });
    }
  });

  it('still takes plain digits, and still checks their bounds', async () => {
    const page = await rawRequest<Schemas['CallList']>(app, 'GET', '/calls?limit=10&offset=0', { headers: auth() });
    expect(page.status).toBe(200);
    expect(page.body.pagination).toMatchObject({ limit: 10, offset: 0 });
    const padded = await rawRequest<Schemas['CallList']>(app, 'GET', '/calls?limit=007', { headers: auth() });
    expect(padded.status).toBe(200);
    expect(padded.body.pagination.limit).toBe(7);
    const low = await rawRequest<ErrorResponse>(app, 'GET', '/calls?limit=0', { headers: auth() });
    expect(low.body.error).toMatchObject({ code: 'invalid_request', param: 'limit' });
    const negative = await rawRequest<ErrorResponse>(app, 'GET', '/calls?offset=-1', { headers: auth() });
    expect(negative.body.error).toMatchObject({ code: 'invalid_request', param: 'offset' });
  });
});

describe('the published spec, for generators', () => {
  it('declares the headers the server always sends as required, per status', async () => {
    const { publishedSpec } = await import('./support/spec/published.js');
    const { requiredResponseHeaders } = await import('./support/spec/response-headers.js');
    const required = (status: number) => requiredResponseHeaders(publishedSpec, '/calls', 'get', status).sort();
    expect(required(200)).toEqual(['request-id', ...RATE_LIMIT_HEADERS].sort());
    expect(required(400)).toEqual(['request-id', ...RATE_LIMIT_HEADERS].sort());
    expect(required(401)).toEqual(['request-id', 'www-authenticate']);
    expect(required(429)).toEqual(['request-id', 'retry-after']);
    expect(required(503)).toEqual(['request-id', 'retry-after']);
  });

  it('names every delivery body in WebhookEvent, discriminated by a const event', async () => {
    const { publishedSpec } = await import('./support/spec/published.js');
    const { EVENT_KINDS } = await import('../generated/events.js');
    const schemas = publishedSpec.components!.schemas!;
    const mapping = schemas.WebhookEvent!.discriminator!.mapping!;
    expect(schemas.WebhookEvent!.discriminator!.propertyName).toBe('event');
    expect(Object.keys(mapping)).toEqual([...EVENT_KINDS]);
    for (const [kind, ref] of Object.entries(mapping)) {
      expect(schemas[ref.split('/').at(-1)!]!.properties!.event!.const).toBe(kind);
    }
  });

  it('has no anonymous allOf parts, an https server first and a local one with defaults', async () => {
    const { publishedSpec } = await import('./support/spec/published.js');
    expect(JSON.stringify(publishedSpec)).not.toContain('"allOf"');
    const [production, local] = publishedSpec.servers as Array<{
      url: string;
      variables: Record<string, { default: string }>;
    }>;
    expect(production!.url).toBe('https://{host}/api/v1');
    expect(production!.variables.host!.default).toBeTruthy();
    expect(local!.url).toBe('http://{host}:{port}/api/v1');
    expect(local!.variables.host!.default).toBe('localhost');
    expect(local!.variables.port!.default).toBe('3000');
  });
});
