// GET /calls and GET /calls/{id} over HTTP: one call in each of the nine statuses (the simulator runs
// on a hand-moved clock), every status filter, pagination edges, detail, and cross-org isolation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import type { ErrorResponse } from './support/json.js';
import { fetchCall, testNumber, waitForCall } from './support/calls.js';

const SECOND = 1000;
const STATUSES = [
  'queued',
  'dialing',
  'ringing',
  'in_progress',
  'completed',
  'failed',
  'no_answer',
  'busy',
  'canceled',
] as const;

let database: TestDatabase;
let app: TestApp;
let clock: ManualClock;
let org: TestOrg;
const idByStatus = new Map<string, string>();

async function place(to: string): Promise<string> {
  const { data, error } = await app.client(org.key).POST('/calls', { body: { agent_id: org.agentId, to_e164: to } });
  if (!data) throw new Error(JSON.stringify(error));
  return data.data.id;
}

beforeAll(async () => {
  database = await createTestDatabase();
  clock = new ManualClock();
  app = await startTestApp(database, { clock, config: { simulatorStepMs: SECOND } });
  org = await createTestOrg(database.db);
  const client = app.client(org.key);

  const early = { completed: await place(testNumber('7777')), busy: await place(testNumber('0001')) };
  const more = { no_answer: await place(testNumber('0002')), failed: await place(testNumber('0003')) };
  clock.advance(100 * SECOND);
  for (const [status, id] of Object.entries({ ...early, ...more })) {
    await waitForCall(database.db, client, id, status);
    idByStatus.set(status, id);
  }
  const canceled = await place(testNumber('7777'));
  await client.POST('/calls/{id}/cancel', { params: { path: { id: canceled } } });
  idByStatus.set('canceled', canceled);

  idByStatus.set('in_progress', await place(testNumber('7777')));
  clock.advance(10 * SECOND); // connected after 4 to 6 s; talks for at least 20 s
  await waitForCall(database.db, client, idByStatus.get('in_progress')!, 'in_progress');

  idByStatus.set('ringing', await place('+919876507779')); // rings from 2 s, connects at 6 s
  clock.advance(2.5 * SECOND);
  await waitForCall(database.db, client, idByStatus.get('ringing')!, 'ringing');

  idByStatus.set('dialing', await place(testNumber('7777'))); // dials from 1 s, rings at 2 s
  clock.advance(1.2 * SECOND);
  await waitForCall(database.db, client, idByStatus.get('dialing')!, 'dialing');

  idByStatus.set('queued', await place(testNumber('7777')));
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('GET /calls', () => {
  it('lists all calls newest first, ties broken by id, with the default page size', async () => {
    const { data } = await app.client(org.key).GET('/calls', {});
    expect(data!.pagination).toEqual({ limit: 50, offset: 0, total: 9, has_more: false });
    const ids = data!.data.map((call) => call.id);
    // Calls placed at the same instant (the clock only moves by hand) are ordered by id, descending.
    const tied = (...statuses: string[]) =>
      statuses
        .map((s) => idByStatus.get(s)!)
        .sort()
        .reverse();
    expect(ids).toEqual([
      ...['queued', 'dialing', 'ringing'].map((s) => idByStatus.get(s)),
      ...tied('in_progress', 'canceled'),
      ...tied('completed', 'busy', 'no_answer', 'failed'),
    ]);
  });

  for (const status of STATUSES) {
    it(`filters by status=${status}`, async () => {
      const { data, response } = await app.client(org.key).GET('/calls', { params: { query: { status } } });
      expect(response.status).toBe(200);
      expect(data!.data.map((call) => [call.id, call.status])).toEqual([[idByStatus.get(status), status]]);
      expect(data!.pagination).toEqual({ limit: 50, offset: 0, total: 1, has_more: false });
    });
  }

  it('list items carry the Call fields and no transcript or timeline', async () => {
    const { data } = await app.client(org.key).GET('/calls', { params: { query: { status: 'completed' } } });
    const call = data!.data[0]! as Record<string, unknown>;
    expect(call).toMatchObject({ status: 'completed', direction: 'outbound', provider: 'simulator', reason: null });
    expect(call).not.toHaveProperty('transcript');
    expect(call).not.toHaveProperty('timeline');
  });
});

describe('pagination edges', () => {
  let paged: TestOrg;
  let all: string[];

  beforeAll(async () => {
    paged = await createTestOrg(database.db);
    const client = app.client(paged.key);
    for (let i = 0; i < 12; i += 1) {
      await client.POST('/calls', { body: { agent_id: paged.agentId, to_e164: testNumber('7777') } });
    }
    const { data } = await client.GET('/calls', { params: { query: { limit: 100 } } });
    all = data!.data.map((call) => call.id);
  });

  it('limit 100 returns everything', async () => {
    const { data } = await app.client(paged.key).GET('/calls', { params: { query: { limit: 100 } } });
    expect(data!.data).toHaveLength(12);
    expect(data!.pagination).toEqual({ limit: 100, offset: 0, total: 12, has_more: false });
  });

  it('limit 1 walks the list one call at a time in the same order', async () => {
    const client = app.client(paged.key);
    const walked: string[] = [];
    for (let offset = 0; offset < 12; offset += 1) {
      const { data } = await client.GET('/calls', { params: { query: { limit: 1, offset } } });
      expect(data!.data).toHaveLength(1);
      expect(data!.pagination).toEqual({ limit: 1, offset, total: 12, has_more: offset < 11 });
      walked.push(data!.data[0]!.id);
    }
    expect(walked).toEqual(all);
  });

  it('a partial last page and an offset past the end', async () => {
    const client = app.client(paged.key);
    const last = await client.GET('/calls', { params: { query: { limit: 5, offset: 10 } } });
    expect(last.data!.data.map((call) => call.id)).toEqual(all.slice(10));
    expect(last.data!.pagination).toEqual({ limit: 5, offset: 10, total: 12, has_more: false });
    const past = await client.GET('/calls', { params: { query: { offset: 500 } } });
    expect(past.data!.data).toEqual([]);
    expect(past.data!.pagination).toEqual({ limit: 50, offset: 500, total: 12, has_more: false });
  });

  for (const [query, param] of [
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=ten', 'limit'],
    ['offset=-1', 'offset'],
    ['status=ended', 'status'],
    ['sort=created_at', 'sort'],
  ] as const) {
    it(`refuses ?${query} with invalid_request param ${param}`, async () => {
      const response = await rawRequest<ErrorResponse>(app, 'GET', `/calls?${query}`, {
        headers: { Authorization: `Bearer ${paged.key}` },
      });
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_request', param });
    });
  }
});

describe('GET /calls/{id}', () => {
  it('a completed call has its transcript and timeline', async () => {
    const call = await fetchCall(app.client(org.key), idByStatus.get('completed')!);
    expect(call.transcript!.length).toBeGreaterThan(0);
    expect(call.timeline.map((entry) => entry.kind)).toContain('status-changed');
  });

  it('a call in flight has a timeline so far and no transcript', async () => {
    const call = await fetchCall(app.client(org.key), idByStatus.get('in_progress')!);
    expect(call).not.toHaveProperty('transcript');
    expect(call.timeline.filter((e) => e.kind === 'status-changed').map((e) => e.detail.status)).toEqual([
      'queued',
      'dialing',
      'ringing',
      'in_progress',
    ]);
    expect(call.started_at).not.toBeNull();
    expect(call.ended_at).toBeNull();
    expect(call.duration_sec).toBeNull();
    expect(call.credits_debited_paise).toBe(0);
  });

  it('a queued call has a one-entry timeline', async () => {
    const call = await fetchCall(app.client(org.key), idByStatus.get('queued')!);
    expect(call.timeline).toEqual([{ at: call.created_at, kind: 'status-changed', detail: { status: 'queued' } }]);
  });

  it('an unknown id is not_found (param id); a malformed one is invalid_request', async () => {
    const client = app.client(org.key);
    const unknown = await client.GET('/calls/{id}', {
      params: { path: { id: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d' } },
    });
    expect(unknown.response.status).toBe(404);
    expect(unknown.error!.error).toMatchObject({ code: 'not_found', param: 'id' });
    const malformed = await client.GET('/calls/{id}', { params: { path: { id: 'not-a-uuid' } } });
    expect(malformed.response.status).toBe(400);
    expect(malformed.error!.error).toMatchObject({ code: 'invalid_request', param: 'id' });
  });
});

describe('cross-org isolation', () => {
  it("another org's call is not_found for GET and cancel, and absent from its list", async () => {
    const stranger = await createTestOrg(database.db);
    const client = app.client(stranger.key);
    const id = idByStatus.get('queued')!;
    const read = await client.GET('/calls/{id}', { params: { path: { id } } });
    expect(read.response.status).toBe(404);
    expect(read.error!.error).toMatchObject({ code: 'not_found', param: 'id' });
    const cancel = await client.POST('/calls/{id}/cancel', { params: { path: { id } } });
    expect(cancel.response.status).toBe(404);
    expect(cancel.error!.error).toMatchObject({ code: 'not_found', param: 'id' });
    const list = await client.GET('/calls', {});
    expect(list.data!.pagination.total).toBe(0);
    expect((await fetchCall(app.client(org.key), id)).status).toBe('queued');
  });
});
