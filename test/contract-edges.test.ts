// The contract's edges that generated clients lean on, through real HTTP: the headers every answer
// carries (401's challenge included), HEAD beside every GET, trailing slashes, and query integers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';

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
    for (const headers of [{}, { Authorization: 'Bearer svc_live_nope' }, { Authorization: 'Basic abc' }]) {
      const answer = await rawRequest(app, 'GET', '/calls', { headers });
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
