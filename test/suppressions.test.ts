// The do-not-call list through real HTTP: adding (201, then 200 replacing the reason), the newest-first
// list with offset and cursor pages and its filters (by reason, one number), removal by number (%2B or a literal +), bad input named by param,
// POST /calls refused with 403 forbidden (param to_e164) leaving no call, hold, ledger row or
// Idempotency-Key behind, callable again once removed, and each org's and each mode's own list.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import type { ErrorResponse, Schemas } from './support/json.js';
import { countCallRows, testNumber } from './support/calls.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';
import { issueApiKey } from '../src/orgs/api-keys.js';
import { orgForMode } from '../src/orgs/modes.js';

type Suppression = Schemas['Suppression'];
type SuppressionList = Schemas['SuppressionList'];

let database: TestDatabase;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  // No workers: placed calls stay queued and keep their holds, so "nothing written" is exact.
  app = await startTestApp(database, { workers: false });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Sends `method path` with `key` and a JSON `body` (as given: a string is sent as it is). */
function send<T>(
  key: string | null,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  return rawRequest<T>(app, method, path, {
    headers: {
      ...(key ? { Authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
}

const suppress = (org: TestOrg, phone: string, reason = 'opted_out', note?: string) =>
  send<{ data: Suppression }>(org.key, 'POST', '/suppressions', {
    phone_e164: phone,
    reason,
    ...(note !== undefined ? { note } : {}),
  });

const list = (org: TestOrg, query = 'limit=100') => send<SuppressionList>(org.key, 'GET', `/suppressions?${query}`);

const call = (org: TestOrg, to: string, idempotencyKey?: string) =>
  send<{ data: { id: string } } & ErrorResponse>(
    org.key,
    'POST',
    '/calls',
    { agent_id: org.agentId, to_e164: to },
    idempotencyKey ? { 'Idempotency-Key': idempotencyKey } : {},
  );

async function suppressionCount(orgId: string): Promise<number> {
  const row = await database.db
    .selectFrom('suppressions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The org placed nothing: no call or pending placement, only its top-up in the ledger, no Idempotency-Key. */
async function expectNothingPlaced(orgId: string, credits: number) {
  expect(await countCallRows(database.db, orgId)).toBe(0);
  const placements = await database.db.selectFrom('call_placements').select('id').where('org_id', '=', orgId).execute();
  expect(placements).toEqual([]);
  const ledger = await database.db.selectFrom('credit_ledger').select('kind').where('org_id', '=', orgId).execute();
  expect(ledger).toEqual(credits > 0 ? [{ kind: 'top_up' }] : []);
  const keys = await database.db
    .selectFrom('call_idempotency_keys')
    .select('key')
    .where('org_id', '=', orgId)
    .execute();
  expect(keys).toEqual([]);
  expect(await balanceAndLedgerSum(database.db, orgId)).toEqual({ balance: credits, ledgerSum: credits });
}

describe('POST /suppressions', () => {
  it('adds a number with 201, and a repeat replaces reason and note with 200, keeping id and created_at', async () => {
    const org = await createTestOrg(database.db);
    const phone = testNumber('1111');
    const added = await suppress(org, phone, 'opted_out', 'Asked on the call.');
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject({
      phone_e164: phone,
      reason: 'opted_out',
      note: 'Asked on the call.',
      created_by: 'api',
    });
    expect(added.body.data.created_at).toBe(added.body.data.updated_at);

    const again = await suppress(org, phone, 'complaint');
    expect(again.status).toBe(200);
    expect(again.body.data).toMatchObject({
      id: added.body.data.id,
      phone_e164: phone,
      reason: 'complaint',
      // An omitted note clears it: the entry is what the last request said.
      note: null,
      created_by: 'api',
      created_at: added.body.data.created_at,
    });
    expect(Date.parse(again.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(added.body.data.updated_at));
    expect(await suppressionCount(org.orgId)).toBe(1);
    expect((await list(org)).body.data).toEqual([again.body.data]);
  });

  const phone = '+919812340000';
  const cases: Array<[string, unknown, string]> = [
    ['a number that is not E.164', { phone_e164: '09812345678', reason: 'opted_out' }, 'phone_e164'],
    ['a number with a space', { phone_e164: '+91 9812345678', reason: 'opted_out' }, 'phone_e164'],
    ['a missing number', { reason: 'opted_out' }, 'phone_e164'],
    ['a missing reason', { phone_e164: phone }, 'reason'],
    ['a reason outside the list', { phone_e164: phone, reason: 'annoyed' }, 'reason'],
    ['a reason that is not text', { phone_e164: phone, reason: 3 }, 'reason'],
    ['a note of 501 characters', { phone_e164: phone, reason: 'other', note: 'n'.repeat(501) }, 'note'],
    ['an empty note', { phone_e164: phone, reason: 'other', note: '' }, 'note'],
    ['an unknown field', { phone_e164: phone, reason: 'other', source: 'crm' }, 'source'],
    ['a body that is an array', [], 'body'],
    ['malformed JSON', '{"phone_e164": ', 'body'],
  ];
  for (const [name, body, param] of cases) {
    it(`refuses ${name} with invalid_request param ${param}, adding nothing`, async () => {
      const org = await createTestOrg(database.db);
      const response = await send<ErrorResponse>(org.key, 'POST', '/suppressions', body);
      expect(response.status).toBe(400);
      expect(response.body.error).toMatchObject({ code: 'invalid_request', param });
      expect(await suppressionCount(org.orgId)).toBe(0);
    });
  }

  it('takes a note of exactly 500 characters, and null for no note', async () => {
    const org = await createTestOrg(database.db);
    const long = await suppress(org, testNumber('1112'), 'other', 'n'.repeat(500));
    expect(long.status).toBe(201);
    expect(long.body.data.note).toHaveLength(500);
    const none = await send<{ data: Suppression }>(org.key, 'POST', '/suppressions', {
      phone_e164: testNumber('1113'),
      reason: 'wrong_number',
      note: null,
    });
    expect(none.status).toBe(201);
    expect(none.body.data.note).toBeNull();
  });

  it('needs a key: 401 unauthorized for every operation of the list', async () => {
    for (const [method, path, body] of [
      ['POST', '/suppressions', { phone_e164: '+919812340001', reason: 'opted_out' }],
      ['GET', '/suppressions', undefined],
      ['DELETE', '/suppressions/%2B919812340001', undefined],
    ] as const) {
      const response = await send<ErrorResponse>(null, method, path, body);
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.body.error.code).toBe('unauthorized');
    }
  });
});

describe('GET /suppressions', () => {
  it('lists newest first, pages by offset and by cursor, with the total', async () => {
    const org = await createTestOrg(database.db);
    const phones = ['+919800001001', '+919800001002', '+919800001003', '+919800001004', '+919800001005'];
    for (const phone of phones) expect((await suppress(org, phone)).status).toBe(201);
    // Changing a reason does not move an entry.
    expect((await suppress(org, phones[0]!, 'complaint')).status).toBe(200);

    const all = await list(org);
    expect(all.status).toBe(200);
    expect(all.body.data.map((entry) => entry.phone_e164)).toEqual([...phones].reverse());
    expect(all.body.pagination).toEqual({ limit: 100, offset: 0, total: 5, has_more: false });

    const second = await list(org, 'limit=2&offset=2');
    expect(second.body.data.map((entry) => entry.phone_e164)).toEqual([phones[2], phones[1]]);
    expect(second.body.pagination).toEqual({ limit: 2, offset: 2, total: 5, has_more: true });

    const ids = all.body.data.map((entry) => entry.id);
    const after = await list(org, `limit=2&starting_after=${ids[1]}`);
    expect(after.body.data.map((entry) => entry.id)).toEqual(ids.slice(2, 4));
    expect(after.body.pagination).toEqual({ limit: 2, offset: 0, total: 5, has_more: true });
    const before = await list(org, `limit=3&ending_before=${ids[4]}`);
    expect(before.body.data.map((entry) => entry.id)).toEqual(ids.slice(1, 4));
    expect(before.body.pagination.has_more).toBe(true);
  });

  it('filters by reason and finds one number, counting what the filter leaves', async () => {
    const org = await createTestOrg(database.db);
    const other = await createTestOrg(database.db);
    const [a, b, c] = [testNumber('3001'), testNumber('3002'), testNumber('3003')];
    await suppress(org, a, 'opted_out');
    await suppress(org, b, 'complaint');
    await suppress(org, c, 'opted_out');
    await suppress(other, b, 'opted_out');

    const optedOut = await list(org, 'reason=opted_out');
    expect(optedOut.body.data.map((entry) => entry.phone_e164)).toEqual([c, a]);
    expect(optedOut.body.pagination).toEqual({ limit: 50, offset: 0, total: 2, has_more: false });
    const firstPage = await list(org, 'reason=opted_out&limit=1');
    expect(firstPage.body.pagination).toMatchObject({ total: 2, has_more: true });
    const next = await list(org, `reason=opted_out&limit=1&starting_after=${firstPage.body.data[0]!.id}`);
    expect(next.body.data.map((entry) => entry.phone_e164)).toEqual([a]);

    const one = await list(org, `phone_e164=${encodeURIComponent(b)}`);
    expect(one.body.data).toHaveLength(1);
    expect(one.body.data[0]).toMatchObject({ phone_e164: b, reason: 'complaint' });
    expect(one.body.pagination.total).toBe(1);
    // Both filters at once, and a number the org never listed: an empty page.
    expect((await list(org, `phone_e164=${encodeURIComponent(b)}&reason=opted_out`)).body.data).toEqual([]);
    const none = await list(org, `phone_e164=${encodeURIComponent(testNumber('3004'))}`);
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ data: [], pagination: { total: 0, has_more: false } });
  });

  it('refuses bad paging parameters, naming each', async () => {
    const org = await createTestOrg(database.db);
    const other = await createTestOrg(database.db);
    const foreign = (await suppress(other, testNumber('2222'))).body.data.id;
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['offset=-1', 'offset'],
      ['starting_after=not-a-uuid', 'starting_after'],
      // Another org's entry is no item of this list.
      [`starting_after=${foreign}`, 'starting_after'],
      [`ending_before=${foreign}`, 'ending_before'],
      ['phone=%2B919800001001', 'phone'],
      ['reason=angry', 'reason'],
      // A literal + in a query string is a space: no E.164 number.
      ['phone_e164=+919800001001', 'phone_e164'],
      ['phone_e164=919800001001', 'phone_e164'],
    ] as const) {
      const response = await send<ErrorResponse>(org.key, 'GET', `/suppressions?${query}`);
      expect(response.status, query).toBe(400);
      expect(response.body.error, query).toMatchObject({ code: 'invalid_request', param });
    }
  });
});

describe('DELETE /suppressions/{phone_e164}', () => {
  it('removes a number given as %2B… or with a literal +, then answers 404 not_found', async () => {
    const org = await createTestOrg(database.db);
    const [encoded, literal] = [testNumber('3331'), testNumber('3332')];
    await suppress(org, encoded);
    await suppress(org, literal);

    const removed = await send(org.key, 'DELETE', `/suppressions/${encodeURIComponent(encoded)}`);
    expect(removed.status).toBe(204);
    expect(removed.body).toBeNull();
    const plus = await send(org.key, 'DELETE', `/suppressions/${literal}`);
    expect(plus.status).toBe(204);
    expect(await suppressionCount(org.orgId)).toBe(0);

    const again = await send<ErrorResponse>(org.key, 'DELETE', `/suppressions/${encodeURIComponent(encoded)}`);
    expect(again.status).toBe(404);
    expect(again.body.error).toEqual({
      code: 'not_found',
      message: "This number is not on your organisation's do-not-call list.",
      param: 'phone_e164',
    });
  });

  it('refuses a value that is not an E.164 number with invalid_request param phone_e164', async () => {
    const org = await createTestOrg(database.db);
    const phone = testNumber('3333');
    await suppress(org, phone);
    // A space (what form-encoding makes of a +) is not a +; nor are digits without one.
    for (const value of [`%20${phone.slice(1)}`, phone.slice(1), 'abc', `%2B${'9'.repeat(16)}`]) {
      const response = await send<ErrorResponse>(org.key, 'DELETE', `/suppressions/${value}`);
      expect(response.status, value).toBe(400);
      expect(response.body.error, value).toMatchObject({ code: 'invalid_request', param: 'phone_e164' });
    }
    expect(await suppressionCount(org.orgId)).toBe(1);
  });

  it('refuses a body, as the other bodiless operations do', async () => {
    const org = await createTestOrg(database.db);
    const phone = testNumber('3334');
    await suppress(org, phone);
    const response = await send<ErrorResponse>(org.key, 'DELETE', `/suppressions/${encodeURIComponent(phone)}`, {});
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request', param: 'body' });
    expect(await suppressionCount(org.orgId)).toBe(1);
  });
});

describe('POST /calls to a suppressed number', () => {
  it('is refused with 403 forbidden (param to_e164), holding and storing nothing', async () => {
    const org = await createTestOrg(database.db, { credits: 10_000 });
    const phone = testNumber('4441');
    await suppress(org, phone, 'do_not_call_registry');
    const refused = await call(org, phone);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toEqual({
      code: 'forbidden',
      message: `${phone} is on your organisation's do-not-call list (reason do_not_call_registry); remove it with DELETE /suppressions/{phone_e164} before calling it.`,
      param: 'to_e164',
    });
    await expectNothingPlaced(org.orgId, 10_000);
    // Another number of the same org is not affected.
    expect((await call(org, testNumber('4442'))).status).toBe(201);
  });

  it('is refused after the plan check and before the credit check', async () => {
    const noPlan = await createTestOrg(database.db, { credits: 0, planId: null });
    const phone = testNumber('4443');
    await suppress(noPlan, phone);
    const planless = await call(noPlan, phone);
    expect(planless.status).toBe(403);
    expect(planless.body.error).toEqual({ code: 'forbidden', message: 'The organisation has no active plan.' });

    const broke = await createTestOrg(database.db, { credits: 0 });
    await suppress(broke, phone);
    const suppressed = await call(broke, phone);
    expect(suppressed.status).toBe(403);
    expect(suppressed.body.error).toMatchObject({ code: 'forbidden', param: 'to_e164' });
    await expectNothingPlaced(broke.orgId, 0);
  });

  it('with an Idempotency-Key is not stored: a retry after the removal places the call', async () => {
    const org = await createTestOrg(database.db, { credits: 10_000 });
    const phone = testNumber('4444');
    await suppress(org, phone);
    const refused = await call(org, phone, 'dnc-retry');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('Idempotent-Replayed')).toBeNull();
    await expectNothingPlaced(org.orgId, 10_000);
    // The same key, still listed: refused again (checked again, not replayed).
    expect((await call(org, phone, 'dnc-retry')).status).toBe(403);

    expect((await send(org.key, 'DELETE', `/suppressions/${encodeURIComponent(phone)}`)).status).toBe(204);
    const placed = await call(org, phone, 'dnc-retry');
    expect(placed.status).toBe(201);
    expect(placed.headers.get('Idempotent-Replayed')).toBeNull();
    const replayed = await call(org, phone, 'dnc-retry');
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('Idempotent-Replayed')).toBe('true');
    expect(replayed.body.data.id).toBe(placed.body.data.id);
    expect(await countCallRows(database.db, org.orgId)).toBe(1);
  });

  it('is placed again once the number is removed, and refused again once it is added back', async () => {
    const org = await createTestOrg(database.db, { credits: 10_000 });
    const phone = testNumber('4445');
    await suppress(org, phone);
    expect((await call(org, phone)).status).toBe(403);
    await send(org.key, 'DELETE', `/suppressions/${phone}`);
    expect((await call(org, phone)).status).toBe(201);
    await suppress(org, phone, 'complaint');
    expect((await call(org, phone)).status).toBe(403);
    expect(await countCallRows(database.db, org.orgId)).toBe(1);
  });
});

describe('whose list', () => {
  it("an org's list neither shows nor stops another org's calls, nor can it remove their entries", async () => {
    const a = await createTestOrg(database.db, { credits: 10_000 });
    const b = await createTestOrg(database.db, { credits: 10_000 });
    const phone = testNumber('5551');
    await suppress(b, phone);
    expect((await list(a)).body.data).toEqual([]);
    const removal = await send<ErrorResponse>(a.key, 'DELETE', `/suppressions/${encodeURIComponent(phone)}`);
    expect(removal.status).toBe(404);
    expect(removal.body.error.param).toBe('phone_e164');
    expect(await suppressionCount(b.orgId)).toBe(1);
    expect((await call(a, phone)).status).toBe(201);
    expect((await call(b, phone)).status).toBe(403);
    // The same number may be on both lists, one entry each.
    expect((await suppress(a, phone)).status).toBe(201);
    expect(await suppressionCount(a.orgId)).toBe(1);
  });

  it("a test key keeps the test mode's own list: it rehearses the refusal without touching the live list", async () => {
    const live = await createTestOrg(database.db, { credits: 10_000 });
    const { key: testKey } = await issueApiKey(database.db, live.orgId, { mode: 'test' });
    const test: TestOrg = { ...live, key: testKey, orgId: await orgForMode(database.db, live.orgId, 'test') };
    const [testOnly, liveOnly] = [testNumber('5552'), testNumber('5553')];

    const rehearsed = await suppress(test, testOnly);
    expect(rehearsed.status).toBe(201);
    expect((await call(test, testOnly)).status).toBe(403);
    // The live list is untouched: live calls to the number go ahead, and live lists do not show it.
    expect((await list(live)).body.data).toEqual([]);
    expect((await call(live, testOnly)).status).toBe(201);

    await suppress(live, liveOnly);
    expect((await call(live, liveOnly)).status).toBe(403);
    expect((await call(test, liveOnly)).status).toBe(201);
    expect((await list(test)).body.data.map((entry) => entry.phone_e164)).toEqual([testOnly]);
    // Neither key removes the other mode's entry.
    const crossed = await send<ErrorResponse>(live.key, 'DELETE', `/suppressions/${encodeURIComponent(testOnly)}`);
    expect(crossed.status).toBe(404);
    expect(await suppressionCount(test.orgId)).toBe(1);
  });
});
