// Contacts through real HTTP: idempotent upsert, partial updates, contact.created once, the filtered list.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import type { ErrorResponse } from './support/json.js';
import { jsonBody, type Schemas } from './support/json.js';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  org = await createTestOrg(database.db, { planId: 'scale' });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

async function contactEvents(orgId: string, phone: string) {
  const rows = await database.db
    .selectFrom('events')
    .select(['id', 'kind', 'data'])
    .where('org_id', '=', orgId)
    .where('kind', '=', 'contact.created')
    .execute();
  return rows.filter((row) => (row.data as unknown as { phone_e164: string }).phone_e164 === phone);
}

async function contactCount(orgId: string): Promise<number> {
  const row = await database.db
    .selectFrom('contacts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('POST /contacts', () => {
  it('creates a contact, emits contact.created once, and updates it on repeat', async () => {
    const client = app.client(org.key);
    const created = await client.POST('/contacts', {
      body: {
        phone_e164: '+919800000001',
        name: 'Asha Verma',
        email: 'asha@example.com',
        language_pref: 'hi-IN',
        consent_capture: 'website_form',
        metadata: { crm_lead_id: 'LEAD-1', priority: 2, vip: true },
      },
    });
    expect(created.response.status).toBe(201);
    expect(created.data?.data).toMatchObject({ phone_e164: '+919800000001', name: 'Asha Verma' });
    const id = created.data!.data.id;

    const events = await contactEvents(org.orgId, '+919800000001');
    expect(events).toHaveLength(1);
    expect(events[0]!.id).toMatch(/^evt_[a-z0-9]{24}$/);
    expect(events[0]!.data).toEqual({
      contact_id: id,
      phone_e164: '+919800000001',
      name: 'Asha Verma',
      consent_capture: 'website_form',
    });

    const updated = await client.POST('/contacts', { body: { phone_e164: '+919800000001', name: 'Asha V.' } });
    expect(updated.response.status).toBe(200);
    expect(updated.data?.data.id).toBe(id);
    expect(updated.data?.data.name).toBe('Asha V.');
    expect(Date.parse(updated.data!.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.data!.data.updated_at));
    expect(await contactEvents(org.orgId, '+919800000001')).toHaveLength(1);

    const listed = await client.GET('/contacts', { params: { query: { limit: 100 } } });
    const stored = listed.data!.data.find((contact) => contact.id === id)!;
    // Omitted fields kept their values.
    expect(stored).toMatchObject({
      name: 'Asha V.',
      email: 'asha@example.com',
      language_pref: 'hi-IN',
      consent_capture: 'website_form',
      metadata: { crm_lead_id: 'LEAD-1', priority: 2, vip: true },
    });
  });

  it('clears a field sent as null and replaces metadata when sent', async () => {
    const client = app.client(org.key);
    await client.POST('/contacts', {
      body: {
        phone_e164: '+919800000002',
        name: 'Ravi',
        email: 'ravi@example.com',
        consent_capture: 'manual',
        metadata: { a: '1' },
      },
    });
    await client.POST('/contacts', { body: { phone_e164: '+919800000002', email: null, metadata: { b: 2 } } });
    const listed = await client.GET('/contacts', { params: { query: { limit: 100 } } });
    const stored = listed.data!.data.find((contact) => contact.phone_e164 === '+919800000002')!;
    expect(stored).toMatchObject({ name: 'Ravi', email: null, metadata: { b: 2 } });
  });

  it('requires consent_capture for a new number and writes nothing without it', async () => {
    const before = await contactCount(org.orgId);
    const response = await app
      .client(org.key)
      .POST('/contacts', { body: { phone_e164: '+919800000003', name: 'No consent' } });
    expect(response.response.status).toBe(400);
    expect(response.error?.error).toMatchObject({ code: 'invalid_request', param: 'consent_capture' });
    expect(await contactCount(org.orgId)).toBe(before);
    expect(await contactEvents(org.orgId, '+919800000003')).toHaveLength(0);
  });

  it('refuses invalid fields with the offending param and writes nothing', async () => {
    const before = await contactCount(org.orgId);
    const tooManyKeys = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v']));
    const cases: Array<[unknown, string]> = [
      [{ phone_e164: '9812345678', consent_capture: 'manual' }, 'phone_e164'],
      [{ consent_capture: 'manual' }, 'phone_e164'],
      [{ phone_e164: '+919800000004', consent_capture: 'phoned' }, 'consent_capture'],
      [{ phone_e164: '+919800000004', consent_capture: 'manual', email: 'not-an-email' }, 'email'],
      [{ phone_e164: '+919800000004', consent_capture: 'manual', language_pref: 'english' }, 'language_pref'],
      [{ phone_e164: '+919800000004', consent_capture: 'manual', metadata: tooManyKeys }, 'metadata'],
      [{ phone_e164: '+919800000004', consent_capture: 'manual', metadata: { nested: { a: 1 } } }, 'metadata.nested'],
      [
        { phone_e164: '+919800000004', consent_capture: 'manual', metadata: { long: 'x'.repeat(501) } },
        'metadata.long',
      ],
      [
        { phone_e164: '+919800000004', consent_capture: 'manual', metadata: { ['k'.repeat(41)]: 'v' } },
        'metadata.' + 'k'.repeat(41),
      ],
      [{ phone_e164: '+919800000004', consent_capture: 'manual', name: 'x'.repeat(201) }, 'name'],
      [{ phone_e164: 919800000004, consent_capture: 'manual' }, 'phone_e164'],
    ];
    for (const [body, param] of cases) {
      const response = await rawRequest<ErrorResponse>(app, 'POST', '/contacts', {
        headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.body.error.code).toBe('invalid_request');
      expect(response.body.error.param, JSON.stringify(body).slice(0, 80)).toBe(param);
      expect(response.body.error.details![param]).toBeInstanceOf(Array);
    }
    expect(await contactCount(org.orgId)).toBe(before);
  });

  it('keeps numbers that read back as sent and refuses the rest, naming the field', async () => {
    // Sent straight to the app, never through a proxy that would parse and rewrite the numbers.
    const send = async (raw: string) => {
      const response = await fetch(`${app.apiUrl}/contacts`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' },
        body: `{"phone_e164":"+919800000071","consent_capture":"manual","metadata":{"n":${raw}}}`,
      });
      return {
        status: response.status,
        body: await jsonBody<{ data: Schemas['Contact']; error: Schemas['ErrorBody'] }>(response),
      };
    };
    for (const raw of [
      '9007199254740993',
      '123456789012345678901234567890',
      '-0',
      '0.1000000000000000055511151231257827',
    ]) {
      const refused = await send(raw);
      expect(refused.status, raw).toBe(400);
      expect(refused.body.error, raw).toMatchObject({ code: 'invalid_request', param: 'metadata.n' });
      expect(refused.body.error.message, raw).toContain(`the number ${raw} cannot be kept exactly`);
    }
    expect(await contactCount(org.orgId)).toBe(await contactCount(org.orgId));
    for (const [raw, kept] of [
      ['9007199254740992', 9007199254740992],
      ['0.1', 0.1],
      ['1e2', 100],
      ['-12.50', -12.5],
    ] as const) {
      const stored = await send(raw);
      expect([200, 201], raw).toContain(stored.status);
      expect(stored.body.data.metadata, raw).toEqual({ n: kept });
    }
  });

  it('gives 50 concurrent upserts of one new number one contact and one event', async () => {
    const client = app.client(org.key);
    const responses = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        client.POST('/contacts', {
          body: { phone_e164: '+919800000050', name: `Racer ${i}`, consent_capture: 'pre_call' },
        }),
      ),
    );
    // Exactly one of them created the contact (201); the others updated it (200).
    expect(responses.map((response) => response.response.status).sort()).toEqual([...Array<number>(49).fill(200), 201]);
    expect(new Set(responses.map((response) => response.data!.data.id)).size).toBe(1);
    const rows = await database.db
      .selectFrom('contacts')
      .select('id')
      .where('phone_e164', '=', '+919800000050')
      .execute();
    expect(rows).toHaveLength(1);
    expect(await contactEvents(org.orgId, '+919800000050')).toHaveLength(1);
  });

  it('keeps the same number separate per org', async () => {
    const other = await createTestOrg(database.db, { planId: 'scale' });
    const mine = await app
      .client(org.key)
      .POST('/contacts', { body: { phone_e164: '+919800000060', consent_capture: 'manual' } });
    const theirs = await app
      .client(other.key)
      .POST('/contacts', { body: { phone_e164: '+919800000060', consent_capture: 'manual' } });
    expect(mine.data!.data.id).not.toBe(theirs.data!.data.id);
    const listed = await app.client(other.key).GET('/contacts');
    expect(listed.data!.data.map((contact) => contact.phone_e164)).toEqual(['+919800000060']);
    expect(listed.data!.pagination.total).toBe(1);
  });
});

describe('GET /contacts', () => {
  it('pages newest first by created_at and filters by consent_capture', async () => {
    const fresh = await createTestOrg(database.db, { planId: 'scale' });
    const client = app.client(fresh.key);
    const consents = ['pre_call', 'website_form', 'manual', 'imported'] as const;
    for (let i = 0; i < 8; i += 1) {
      await client.POST('/contacts', { body: { phone_e164: `+91980000110${i}`, consent_capture: consents[i % 4]! } });
    }
    const first = await client.GET('/contacts', { params: { query: { limit: 3 } } });
    expect(first.data!.pagination).toEqual({ limit: 3, offset: 0, total: 8, has_more: true });
    expect(first.data!.data.map((contact) => contact.phone_e164)).toEqual([
      '+919800001107',
      '+919800001106',
      '+919800001105',
    ]);
    const last = await client.GET('/contacts', { params: { query: { limit: 3, offset: 6 } } });
    expect(last.data!.pagination).toEqual({ limit: 3, offset: 6, total: 8, has_more: false });
    expect(last.data!.data).toHaveLength(2);
    const past = await client.GET('/contacts', { params: { query: { offset: 100 } } });
    expect(past.data!.data).toEqual([]);
    expect(past.data!.pagination).toEqual({ limit: 50, offset: 100, total: 8, has_more: false });

    for (const consent of consents) {
      const filtered = await client.GET('/contacts', { params: { query: { consent_capture: consent } } });
      expect(filtered.data!.pagination.total).toBe(2);
      expect(filtered.data!.data.every((contact) => contact.consent_capture === consent)).toBe(true);
    }
    const bad = await rawRequest<ErrorResponse>(app, 'GET', '/contacts?consent_capture=phoned', {
      headers: { Authorization: `Bearer ${fresh.key}` },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', param: 'consent_capture' });
  });
});

describe('GET /contacts/{id}', () => {
  it('answers the contact as upsert and the list show it, and not_found for another org', async () => {
    const client = app.client(org.key);
    const upserted = await client.POST('/contacts', {
      body: { phone_e164: '+919800000777', name: 'Ravi Kumar', consent_capture: 'manual', metadata: { tier: 'gold' } },
    });
    expect(upserted.response.status).toBe(201);
    // The upsert answers the whole contact, as the list and the read do.
    const contact = upserted.data!.data;
    expect(contact).toMatchObject({
      phone_e164: '+919800000777',
      name: 'Ravi Kumar',
      email: null,
      language_pref: null,
      metadata: { tier: 'gold' },
      consent_capture: 'manual',
    });
    expect(contact.created_at).toBe(contact.updated_at);

    const read = await client.GET('/contacts/{id}', { params: { path: { id: contact.id } } });
    expect(read.response.status).toBe(200);
    expect(read.data?.data).toEqual(contact);
    const listed = await client.GET('/contacts', { params: { query: { limit: 100 } } });
    expect(listed.data?.data.find((item) => item.id === contact.id)).toEqual(contact);

    const other = await createTestOrg(database.db);
    const foreign = await app.client(other.key).GET('/contacts/{id}', { params: { path: { id: contact.id } } });
    expect(foreign.response.status).toBe(404);
    expect(foreign.error).toMatchObject({ error: { code: 'not_found', param: 'id' } });
  });
});
