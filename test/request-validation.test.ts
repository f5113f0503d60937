// Request validation of parameter kinds the published spec does not use yet: the app serves a variant of
// the spec whose GET /agents takes an array query parameter, and openapi-backend's documented
// validateRequest reads and checks it (repeated or single, each item coerced and validated), while the
// operation's scalar parameters keep refusing a second value. An app over the published spec runs
// beside it in the same process, and each keeps to its own document.
import type { Document } from 'openapi-backend';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiDocument } from '../src/http/api-routes.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { jsonBody, type ErrorResponse, type Schemas } from './support/json.js';

let database: TestDatabase;
let app: TestApp;
let published: TestApp;
let org: TestOrg;

/** The published spec with GET /agents also taking `sample`: up to three integers of at least 1. */
function specWithArrayQueryParameter(): Document {
  const document = structuredClone(apiDocument) as unknown as {
    paths: Record<string, Record<string, { parameters: unknown[] }>>;
  };
  document.paths['/agents']!.get!.parameters.push({
    name: 'sample',
    in: 'query',
    schema: { type: 'array', items: { type: 'integer', minimum: 1 }, maxItems: 3 },
  });
  return document as unknown as Document;
}

beforeAll(async () => {
  database = await createTestDatabase();
  org = await createTestOrg(database.db);
  // The published spec's app answers GET /agents first, so what it derives from the operation exists
  // before the variant's app sees its first request.
  published = await startTestApp(database, { workers: false });
  expect((await listAgents(published, 'limit=1')).status).toBe(200);
  app = await startTestApp(database, { workers: false, document: specWithArrayQueryParameter() });
});

afterAll(async () => {
  await app?.close();
  await published?.close();
  await database?.drop();
});

/** GET /agents with `query`; plain fetch, since Prism judges by the published spec, not this variant. */
async function listAgents(server: TestApp, query: string) {
  const response = await fetch(`${server.apiUrl}/agents?${query}`, { headers: { Authorization: `Bearer ${org.key}` } });
  return { status: response.status, body: await jsonBody<Partial<Schemas['AgentList'] & ErrorResponse>>(response) };
}

describe('an array query parameter', () => {
  it('is served, given once or repeated', async () => {
    for (const query of ['sample=1', 'sample=1&sample=2', 'sample=1&sample=2&sample=3', 'limit=5&sample=7']) {
      const answer = await listAgents(app, query);
      expect({ query, status: answer.status }).toEqual({ query, status: 200 });
      expect(answer.body.data).toHaveLength(1);
    }
  });

  it('is validated item by item and as a whole, in the error envelope', async () => {
    const tooMany = await listAgents(app, 'sample=1&sample=2&sample=3&sample=4');
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error).toMatchObject({ code: 'invalid_request', param: 'sample' });

    const belowMinimum = await listAgents(app, 'sample=1&sample=0');
    expect(belowMinimum.status).toBe(400);
    expect(belowMinimum.body.error).toMatchObject({ code: 'invalid_request', param: 'sample.1' });

    const notDecimal = await listAgents(app, 'sample=1&sample=0x10');
    expect(notDecimal.status).toBe(400);
    expect(notDecimal.body.error).toMatchObject({
      code: 'invalid_request',
      param: 'sample',
      message: 'sample: must be an integer written in decimal digits',
    });
  });

  it('leaves the scalar parameters beside it refusing a second value', async () => {
    const answer = await listAgents(app, 'sample=1&sample=2&limit=1&limit=2');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      code: 'invalid_request',
      param: 'limit',
      message: 'limit: is given more than once; give it once',
    });
  });

  it('belongs to the variant alone: the app over the published spec, in the same process, refuses it', async () => {
    const answer = await listAgents(published, 'sample=1');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: 'invalid_request', param: 'sample' });
  });
});
