// The campaigns API through real HTTP and PostgreSQL: creation by ids and by filter (contacts copied
// in order, consent exclusions skipped from the start, a 100-contact filter), every refused body named
// by code and param with nothing written, Idempotency-Key replays and conflicts, newest-first campaign
// pages and contact pages in list order (offset and both cursors), counters that add up with the
// campaign's calls, pause/resume/cancel and their refusals, campaign_id on calls and GET /calls filtered
// by it (with status, paged, its total, and 400/404 for a malformed, foreign or other-mode id), and each
// org's and each mode's own campaigns. Nothing dispatches here (no workers): states the dispatcher would
// reach are written to the database directly.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import type { ErrorResponse, Schemas } from './support/json.js';
import { testNumber } from './support/calls.js';
import { issueApiKey } from '../src/orgs/api-keys.js';
import { orgForMode } from '../src/orgs/modes.js';
import { MAX_CONTACT_IDS } from '../src/campaigns/policy.js';

type Campaign = Schemas['Campaign'];
type CampaignList = Schemas['CampaignList'];
type CampaignContactList = Schemas['CampaignContactList'];
type Answer = { data: Campaign } & ErrorResponse;

let database: TestDatabase;
let app: TestApp;
const clock = new ManualClock();

beforeAll(async () => {
  database = await createTestDatabase();
  // No workers: nothing dispatches, so a campaign stays where the test puts it.
  app = await startTestApp(database, { workers: false, clock });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Sends `method path` with `key` and a JSON `body`. */
function send<T>(key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  return rawRequest<T>(app, method, path, {
    headers: {
      Authorization: `Bearer ${key}`,
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

const newOrg = (options: Parameters<typeof createTestOrg>[1] = {}) =>
  createTestOrg(database.db, { planId: 'scale', ...options });

let phones = 0;
/** A number no other contact of the file has. */
const freshPhone = () =>
  `+9181${String(Date.now() % 1e6).padStart(6, '0')}${String((phones += 1) % 100).padStart(2, '0')}`;

/** Adds a contact through the API; returns its id. */
async function addContact(org: TestOrg, consent = 'manual', phone = freshPhone()): Promise<string> {
  const answer = await send<{ data: { id: string } }>(org.key, 'POST', '/contacts', {
    phone_e164: phone,
    consent_capture: consent,
  });
  expect(answer.status).toBe(201);
  return answer.body.data.id;
}

/** A valid creation body for `org` choosing `contacts`. */
function campaignBody(org: TestOrg, contacts: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    name: 'Renewals',
    agent_id: org.agentId,
    contacts,
    schedule: { timezone: 'Asia/Kolkata', windows: [{ days: ['mon', 'tue'], start: '10:00', end: '18:00' }] },
    ...extra,
  };
}

const create = (org: TestOrg, body: unknown, key?: string) =>
  send<Answer>(org.key, 'POST', '/campaigns', body, key ? { 'Idempotency-Key': key } : {});

/** Creates a campaign of `org` over new contacts (`count` of them); returns it and the contact ids. */
async function newCampaign(org: TestOrg, count = 3, extra: Record<string, unknown> = {}) {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push(await addContact(org));
  const answer = await create(org, campaignBody(org, { contact_ids: ids }, extra));
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return { campaign: answer.body.data, ids };
}

const contactsOf = (org: TestOrg, id: string, query = 'limit=100') =>
  send<CampaignContactList & ErrorResponse>(org.key, 'GET', `/campaigns/${id}/contacts?${query}`);

async function campaignCount(orgId: string): Promise<number> {
  const row = await database.db
    .selectFrom('campaigns')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Sets contact states as the dispatcher would leave them. */
async function setState(campaignId: string, contactId: string, state: string, extra = sql``) {
  await sql`UPDATE campaign_contacts SET state = ${state}, skip_reason = ${state === 'skipped' ? 'suppressed' : null} ${extra}
            WHERE campaign_id = ${campaignId} AND contact_id = ${contactId}`.execute(database.db);
}

function sumOf(counters: Schemas['CampaignCounters']): number {
  const { pending, in_progress, completed, failed, no_answer, busy, expired, canceled, skipped } = counters;
  return pending + in_progress + completed + failed + no_answer + busy + expired + canceled + skipped.total;
}

describe('POST /campaigns', () => {
  it('creates a campaign by ids: contacts copied in the order given, excluded consent skipped from the start', async () => {
    const org = await newOrg();
    const phones = [testNumber('2001'), testNumber('2002'), testNumber('2003')] as const;
    const first = await addContact(org, 'manual', phones[0]);
    const second = await addContact(org, 'imported', phones[1]);
    const third = await addContact(org, 'website_form', phones[2]);
    const answer = await create(
      org,
      campaignBody(
        org,
        // An id in capitals is the same id, echoed as the API writes ids.
        { contact_ids: [third.toUpperCase(), first, second] },
        {
          exclude_consent_capture: ['imported'],
          max_concurrency: 2,
          retry: { max_attempts: 3, on: ['busy', 'failed'], interval_sec: 600 },
          metadata: { crm: 'CMP-1', priority: 2 },
          schedule: {
            timezone: 'Asia/Kolkata',
            windows: [{ days: ['mon'], start: '09:00', end: '24:00' }],
          },
        },
      ),
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    expect(answer.headers.get('Idempotent-Replayed')).toBeNull();
    const campaign = answer.body.data;
    expect(campaign).toMatchObject({
      name: 'Renewals',
      agent_id: org.agentId,
      status: 'scheduled',
      paused_reason: null,
      contacts: { contact_ids: [third, first, second] },
      exclude_consent_capture: ['imported'],
      max_concurrency: 2,
      // failed_reasons omitted with failed retried: both reasons that are worth a retry.
      retry: {
        max_attempts: 3,
        on: ['busy', 'failed'],
        failed_reasons: ['provider_error', 'timeout'],
        interval_sec: 600,
      },
      metadata: { crm: 'CMP-1', priority: 2 },
      finished_at: null,
      counters: {
        contacts_total: 3,
        pending: 2,
        in_progress: 0,
        skipped: { total: 1, suppressed: 0, consent_excluded: 1 },
        calls_placed: 0,
        credits_charged_paise: 0,
      },
    });
    // No starts_at means now.
    expect(campaign.schedule.timezone).toBe('Asia/Kolkata');
    expect(campaign.schedule.windows).toEqual([{ days: ['mon'], start: '09:00', end: '24:00' }]);
    expect(campaign.schedule.starts_at).toBe(clock.now().toISOString());
    expect(campaign.schedule.ends_at).toBeNull();
    expect(sumOf(campaign.counters)).toBe(campaign.counters.contacts_total);

    const contacts = await contactsOf(org, campaign.id);
    expect(contacts.status).toBe(200);
    expect(contacts.body.pagination).toEqual({ limit: 100, offset: 0, total: 3, has_more: false });
    expect(contacts.body.data).toEqual([
      {
        contact_id: third,
        phone_e164: phones[2],
        position: 1,
        state: 'pending',
        skip_reason: null,
        attempts: 0,
        last_call_id: null,
        last_outcome: null,
        last_reason: null,
        next_attempt_at: null,
      },
      expect.objectContaining({ contact_id: first, position: 2, state: 'pending', phone_e164: phones[0] }),
      expect.objectContaining({ contact_id: second, position: 3, state: 'skipped', skip_reason: 'consent_excluded' }),
    ]);
    expect((await send<Answer>(org.key, 'GET', `/campaigns/${campaign.id}`)).body.data).toEqual(campaign);
  });

  it('creates a campaign over more than 100 contacts chosen by a filter, oldest contact first', async () => {
    const org = await newOrg();
    const consent = ['manual', 'website_form', 'imported', 'pre_call'] as const;
    const made = Array.from({ length: 160 }, (_, i) => ({
      org_id: org.orgId,
      phone_e164: `+9172${String(i).padStart(8, '0')}`,
      consent_capture: consent[i % 4]!,
      created_at: new Date(Date.UTC(2026, 0, 1) + i * 1000),
      metadata: '{}',
    }));
    const rows = await database.db.insertInto('contacts').values(made).returning(['id', 'phone_e164']).execute();
    const byPhone = new Map(rows.map((row) => [row.phone_e164, row.id]));
    // Three of the four consent values: 120 contacts, the 40 captured pre_call excluded.
    const answer = await create(
      org,
      campaignBody(
        org,
        { filter: { consent_capture: ['manual', 'imported', 'pre_call'] } },
        { exclude_consent_capture: ['pre_call'] },
      ),
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    const { counters } = answer.body.data;
    expect(counters).toMatchObject({
      contacts_total: 120,
      pending: 80,
      skipped: { total: 40, suppressed: 0, consent_excluded: 40 },
    });
    expect(sumOf(counters)).toBe(120);
    const listed = await contactsOf(org, answer.body.data.id);
    expect(listed.body.pagination.total).toBe(120);
    const expected = made.filter((contact) => contact.consent_capture !== 'website_form').slice(0, 100);
    expect(listed.body.data.map((item) => [item.position, item.contact_id])).toEqual(
      expected.map((contact, index) => [index + 1, byPhone.get(contact.phone_e164)]),
    );

    // Every contact of the book: an empty filter.
    const all = await create(org, campaignBody(org, { filter: {} }));
    expect(all.status).toBe(201);
    expect(all.body.data.counters).toMatchObject({ contacts_total: 160, pending: 160 });
    expect(all.body.data.contacts).toEqual({ filter: {} });
  });

  it('takes a start in the past as now, and keeps a future start and an end', async () => {
    const org = await newOrg();
    const contact = await addContact(org);
    const past = await create(
      org,
      campaignBody(
        org,
        { contact_ids: [contact] },
        {
          schedule: {
            starts_at: '2020-01-01T00:00:00Z',
            ends_at: new Date(clock.now().getTime() + 86_400_000).toISOString(),
            timezone: 'UTC',
            windows: [{ days: ['sun'], start: '00:00', end: '00:01' }],
          },
        },
      ),
    );
    expect(past.status, JSON.stringify(past.body)).toBe(201);
    expect(past.body.data.schedule.starts_at).toBe(clock.now().toISOString());
    const startsAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const endsAt = new Date(clock.now().getTime() + 7_200_000).toISOString();
    const future = await create(
      org,
      campaignBody(
        org,
        { contact_ids: [contact] },
        {
          schedule: {
            starts_at: startsAt,
            ends_at: endsAt,
            timezone: 'Europe/London',
            windows: [{ days: ['sat'], start: '10:00', end: '11:00' }],
          },
        },
      ),
    );
    expect(future.status).toBe(201);
    expect(future.body.data.schedule).toMatchObject({
      starts_at: startsAt,
      ends_at: endsAt,
      timezone: 'Europe/London',
    });
  });

  it('stores a start and an end given with any offset as the instants they name, in UTC', async () => {
    const org = await newOrg();
    const contact = await addContact(org, 'manual');
    // PostgreSQL reads offsets up to 15:59 only; the service turns the time to UTC itself.
    const created = await create(
      org,
      campaignBody(
        org,
        { contact_ids: [contact] },
        {
          schedule: {
            starts_at: '2099-05-31T20:30:00+16:30',
            ends_at: '2099-06-01T00:00:00+16:00',
            timezone: 'UTC',
            windows: [{ days: ['mon'], start: '10:00', end: '11:00' }],
          },
        },
      ),
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.schedule).toMatchObject({
      starts_at: '2099-05-31T04:00:00.000Z',
      ends_at: '2099-05-31T08:00:00.000Z',
    });
  });

  describe('refuses a bad request with its code and param, and writes nothing', () => {
    let org: TestOrg;
    let other: TestOrg;
    let contact: string;
    let otherContact: string;
    beforeAll(async () => {
      org = await newOrg();
      other = await newOrg();
      contact = await addContact(org, 'manual');
      otherContact = await addContact(other, 'manual');
    });

    const schedule = (change: Record<string, unknown>) => ({
      schedule: { timezone: 'Asia/Kolkata', windows: [{ days: ['mon'], start: '10:00', end: '18:00' }], ...change },
    });
    const window = (change: Record<string, unknown>) =>
      schedule({ windows: [{ days: ['mon'], start: '10:00', end: '18:00', ...change }] });
    const hourAgo = () => new Date(clock.now().getTime() - 3_600_000).toISOString();
    const inHours = (hours: number) => new Date(clock.now().getTime() + hours * 3_600_000).toISOString();

    const cases: Array<[string, () => Record<string, unknown>, number, string, string]> = [
      ['an empty name', () => ({ name: '' }), 400, 'invalid_request', 'name'],
      ['a name of white space alone', () => ({ name: ' \t\u00a0' }), 400, 'invalid_request', 'name'],
      ['a name too long', () => ({ name: 'x'.repeat(201) }), 400, 'invalid_request', 'name'],
      ['no agent', () => ({ agent_id: undefined }), 400, 'invalid_request', 'agent_id'],
      ['an unknown agent', () => ({ agent_id: randomUUID() }), 404, 'not_found', 'agent_id'],
      ["another org's agent", () => ({ agent_id: other.agentId }), 404, 'not_found', 'agent_id'],
      ['no contacts', () => ({ contacts: undefined }), 400, 'invalid_request', 'contacts'],
      ['an empty choice', () => ({ contacts: {} }), 400, 'invalid_request', 'contacts'],
      [
        'ids and a filter at once',
        () => ({ contacts: { contact_ids: [contact], filter: {} } }),
        400,
        'invalid_request',
        'contacts',
      ],
      ['no contact ids', () => ({ contacts: { contact_ids: [] } }), 400, 'invalid_request', 'contacts.contact_ids'],
      // The dashboard's CSV bound is the same number.
      [
        'more contact ids than a campaign takes',
        () => ({ contacts: { contact_ids: Array.from({ length: MAX_CONTACT_IDS + 1 }, () => randomUUID()) } }),
        400,
        'invalid_request',
        'contacts.contact_ids',
      ],
      [
        'a repeated contact id',
        () => ({ contacts: { contact_ids: [contact, contact] } }),
        400,
        'invalid_request',
        'contacts.contact_ids',
      ],
      [
        'a repeated contact id in other letter case',
        () => ({ contacts: { contact_ids: [contact, contact.toUpperCase()] } }),
        400,
        'invalid_request',
        'contacts.contact_ids.1',
      ],
      [
        'a contact id that is no uuid',
        () => ({ contacts: { contact_ids: ['nope'] } }),
        400,
        'invalid_request',
        'contacts.contact_ids.0',
      ],
      [
        'an unknown contact',
        () => ({ contacts: { contact_ids: [contact, randomUUID()] } }),
        404,
        'not_found',
        'contacts.contact_ids.1',
      ],
      [
        "another org's contact",
        () => ({ contacts: { contact_ids: [contact, otherContact] } }),
        404,
        'not_found',
        'contacts.contact_ids.1',
      ],
      [
        'an unknown consent value',
        () => ({ contacts: { filter: { consent_capture: ['phoned'] } } }),
        400,
        'invalid_request',
        'contacts.filter.consent_capture.0',
      ],
      [
        'a filter that matches no contact',
        () => ({ contacts: { filter: { consent_capture: ['pre_call'] } } }),
        400,
        'invalid_request',
        'contacts',
      ],
      [
        'an unknown excluded consent',
        () => ({ exclude_consent_capture: ['x'] }),
        400,
        'invalid_request',
        'exclude_consent_capture.0',
      ],
      ['no schedule', () => ({ schedule: undefined }), 400, 'invalid_request', 'schedule'],
      ['no time zone', () => schedule({ timezone: undefined }), 400, 'invalid_request', 'schedule.timezone'],
      [
        'an unknown time zone',
        () => schedule({ timezone: 'Mars/Olympus_Mons' }),
        400,
        'invalid_request',
        'schedule.timezone',
      ],
      [
        'an offset for a time zone',
        () => schedule({ timezone: '+05:30' }),
        400,
        'invalid_request',
        'schedule.timezone',
      ],
      ['no windows', () => schedule({ windows: [] }), 400, 'invalid_request', 'schedule.windows'],
      [
        'fifteen windows',
        () =>
          schedule({ windows: Array.from({ length: 15 }, () => ({ days: ['mon'], start: '10:00', end: '11:00' })) }),
        400,
        'invalid_request',
        'schedule.windows',
      ],
      ['a window without days', () => window({ days: [] }), 400, 'invalid_request', 'schedule.windows.0.days'],
      ['a day twice', () => window({ days: ['mon', 'mon'] }), 400, 'invalid_request', 'schedule.windows.0.days'],
      ['an unknown day', () => window({ days: ['monday'] }), 400, 'invalid_request', 'schedule.windows.0.days.0'],
      [
        'a start that is not HH:MM',
        () => window({ start: '9:00' }),
        400,
        'invalid_request',
        'schedule.windows.0.start',
      ],
      ['a start of 24:00', () => window({ start: '24:00' }), 400, 'invalid_request', 'schedule.windows.0.start'],
      ['an end past 24:00', () => window({ end: '24:30' }), 400, 'invalid_request', 'schedule.windows.0.end'],
      [
        'an end before the start',
        () => window({ start: '18:00', end: '10:00' }),
        400,
        'invalid_request',
        'schedule.windows.0.end',
      ],
      [
        'an end equal to the start',
        () => window({ start: '10:00', end: '10:00' }),
        400,
        'invalid_request',
        'schedule.windows.0.end',
      ],
      [
        'a start that is no date',
        () => schedule({ starts_at: 'tomorrow' }),
        400,
        'invalid_request',
        'schedule.starts_at',
      ],
      [
        'an end before the start',
        () => schedule({ starts_at: inHours(5), ends_at: inHours(4) }),
        400,
        'invalid_request',
        'schedule.ends_at',
      ],
      [
        'an end at the start',
        () => schedule({ starts_at: inHours(5), ends_at: inHours(5) }),
        400,
        'invalid_request',
        'schedule.ends_at',
      ],
      ['an end in the past', () => schedule({ ends_at: hourAgo() }), 400, 'invalid_request', 'schedule.ends_at'],
      // The format lets a leap second through; no Date holds one.
      [
        'a start on a leap second',
        () => schedule({ starts_at: '2030-06-30T23:59:60Z' }),
        400,
        'invalid_request',
        'schedule.starts_at',
      ],
      [
        'an end on a leap second',
        () => schedule({ ends_at: '2030-06-30T23:59:60Z' }),
        400,
        'invalid_request',
        'schedule.ends_at',
      ],
      // Nor would a timestamp past 9999 in UTC be served back in the format.
      [
        'a start past the year 9999 in UTC',
        () => schedule({ starts_at: '9999-12-31T23:59:59-14:00' }),
        400,
        'invalid_request',
        'schedule.starts_at',
      ],
      [
        'an end past the year 9999 in UTC',
        () => schedule({ ends_at: '9999-12-31T23:59:59-15:00' }),
        400,
        'invalid_request',
        'schedule.ends_at',
      ],
      ['a concurrency of 0', () => ({ max_concurrency: 0 }), 400, 'invalid_request', 'max_concurrency'],
      ['a concurrency over 1000', () => ({ max_concurrency: 1001 }), 400, 'invalid_request', 'max_concurrency'],
      ['no attempt', () => ({ retry: { max_attempts: 0 } }), 400, 'invalid_request', 'retry.max_attempts'],
      ['six attempts', () => ({ retry: { max_attempts: 6 } }), 400, 'invalid_request', 'retry.max_attempts'],
      [
        'a retried ending that cannot be',
        () => ({ retry: { on: ['canceled'] } }),
        400,
        'invalid_request',
        'retry.on.0',
      ],
      ['a retried ending twice', () => ({ retry: { on: ['busy', 'busy'] } }), 400, 'invalid_request', 'retry.on'],
      [
        'a carrier rejection retried',
        () => ({ retry: { on: ['failed'], failed_reasons: ['carrier_rejected'] } }),
        400,
        'invalid_request',
        'retry.failed_reasons.0',
      ],
      [
        'failed retried for no reason',
        () => ({ retry: { max_attempts: 2, on: ['failed'], failed_reasons: [] } }),
        400,
        'invalid_request',
        'retry.failed_reasons',
      ],
      [
        'failed reasons without failed',
        () => ({ retry: { on: ['busy'], failed_reasons: ['timeout'] } }),
        400,
        'invalid_request',
        'retry.failed_reasons',
      ],
      [
        'an interval under a minute',
        () => ({ retry: { max_attempts: 2, on: ['busy'], interval_sec: 59 } }),
        400,
        'invalid_request',
        'retry.interval_sec',
      ],
      ['an unknown retry field', () => ({ retry: { tries: 2 } }), 400, 'invalid_request', 'retry.tries'],
      [
        'retried endings with the default single attempt',
        () => ({ retry: { on: ['busy'] } }),
        400,
        'invalid_request',
        'retry.max_attempts',
      ],
      [
        'retried endings with one attempt',
        () => ({ retry: { max_attempts: 1, on: ['no_answer', 'failed'] } }),
        400,
        'invalid_request',
        'retry.max_attempts',
      ],
      // The request's own rules come before the agent's lookup.
      [
        'an end in the past and an unknown agent',
        () => ({ agent_id: randomUUID(), ...schedule({ ends_at: hourAgo() }) }),
        400,
        'invalid_request',
        'schedule.ends_at',
      ],
      [
        'metadata with a long key',
        () => ({ metadata: { ['k'.repeat(41)]: 1 } }),
        400,
        'invalid_request',
        'metadata.' + 'k'.repeat(41),
      ],
      ['metadata with an object value', () => ({ metadata: { a: { b: 1 } } }), 400, 'invalid_request', 'metadata.a'],
      ['an unknown field', () => ({ priority: 1 }), 400, 'invalid_request', 'priority'],
    ];

    it.each(cases)('%s', async (_, change, status, code, param) => {
      const body: Record<string, unknown> = { ...campaignBody(org, { contact_ids: [contact] }), ...change() };
      for (const [field, value] of Object.entries(body)) if (value === undefined) delete body[field];
      const answer = await create(org, body, `refused-${randomUUID()}`);
      expect(answer.status, JSON.stringify(answer.body)).toBe(status);
      expect(answer.body.error.code).toBe(code);
      expect(answer.body.error.param).toBe(param);
      expect(await campaignCount(org.orgId)).toBe(0);
      expect(await campaignCount(other.orgId)).toBe(0);
    });

    it('says an end must be in the future when it is past and no start was given', async () => {
      const body = { ...campaignBody(org, { contact_ids: [contact] }), ...schedule({ ends_at: hourAgo() }) };
      const answer = await create(org, body);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({
        param: 'schedule.ends_at',
        message: 'schedule.ends_at: must be in the future',
      });
    });

    it('takes exactly MAX_CONTACT_IDS ids past the schema, to the contact lookup', async () => {
      const ids = Array.from({ length: MAX_CONTACT_IDS }, () => randomUUID());
      const answer = await create(org, campaignBody(org, { contact_ids: ids }));
      expect(answer.status, JSON.stringify(answer.body)).toBe(404);
      expect(answer.body.error).toMatchObject({ code: 'not_found', param: 'contacts.contact_ids.0' });
      expect(await campaignCount(org.orgId)).toBe(0);
    });

    it('forbidden without an active plan', async () => {
      const planless = await createTestOrg(database.db, { planId: null });
      const answer = await create(planless, campaignBody(planless, { contact_ids: [randomUUID()] }));
      expect(answer.status).toBe(403);
      expect(answer.body.error.code).toBe('forbidden');
      expect(await campaignCount(planless.orgId)).toBe(0);
    });
  });
});

describe('Idempotency-Key on POST /campaigns', () => {
  it('replays the campaign for the same body, refuses another body, and keeps no key of a refused request', async () => {
    const org = await newOrg();
    const contact = await addContact(org);
    const body = campaignBody(org, { contact_ids: [contact] });
    const first = await create(org, body, 'cmp-key-1');
    expect(first.status).toBe(201);
    const again = await create(org, { ...body, schedule: { ...body.schedule } }, 'cmp-key-1');
    expect(again.status).toBe(201);
    expect(again.headers.get('Idempotent-Replayed')).toBe('true');
    expect(again.body.data).toEqual(first.body.data);
    expect(await campaignCount(org.orgId)).toBe(1);

    const conflict = await create(org, { ...body, name: 'Another' }, 'cmp-key-1');
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toMatchObject({ code: 'idempotency_conflict', param: 'Idempotency-Key' });

    // A refused request keeps no key: the same key then creates.
    const refused = await create(org, { ...body, agent_id: randomUUID() }, 'cmp-key-2');
    expect(refused.status).toBe(404);
    const created = await create(org, body, 'cmp-key-2');
    expect(created.status).toBe(201);
    expect(created.headers.get('Idempotent-Replayed')).toBeNull();
    expect(created.body.data.id).not.toBe(first.body.data.id);

    // A key of POST /calls is apart from the campaigns' keys.
    const call = await send(
      org.key,
      'POST',
      '/calls',
      { agent_id: org.agentId, to_e164: testNumber('3001') },
      {
        'Idempotency-Key': 'cmp-key-3',
      },
    );
    expect(call.status).toBe(201);
    expect((await create(org, body, 'cmp-key-3')).status).toBe(201);
    expect(await campaignCount(org.orgId)).toBe(3);
  });

  it('creates one campaign for concurrent requests with one key', async () => {
    const org = await newOrg();
    const contact = await addContact(org);
    const body = campaignBody(org, { contact_ids: [contact] });
    const answers = await Promise.all(Array.from({ length: 6 }, () => create(org, body, 'cmp-race')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(201));
    expect(new Set(answers.map((answer) => answer.body.data.id)).size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get('Idempotent-Replayed') === 'true')).toHaveLength(5);
    expect(await campaignCount(org.orgId)).toBe(1);
  });

  it('forgets a key after 24 hours: the same key then creates a new campaign', async () => {
    const own = new ManualClock();
    const other = await startTestApp(database, { workers: false, clock: own });
    try {
      const org = await newOrg();
      const contact = await addContact(org);
      const post = (key: string) =>
        rawRequest<Answer>(other, 'POST', '/campaigns', {
          headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json', 'Idempotency-Key': key },
          body: JSON.stringify(campaignBody(org, { contact_ids: [contact] })),
        });
      const first = await post('cmp-old');
      expect(first.status).toBe(201);
      own.advance(25 * 3_600_000);
      const later = await post('cmp-old');
      expect(later.status).toBe(201);
      expect(later.headers.get('Idempotent-Replayed')).toBeNull();
      expect(later.body.data.id).not.toBe(first.body.data.id);
    } finally {
      await other.close();
    }
  });
});

describe('GET /campaigns', () => {
  it('pages newest first by offset and by both cursors, filters by status, and refuses an unknown cursor', async () => {
    const org = await newOrg();
    const made: Campaign[] = [];
    for (let i = 0; i < 5; i += 1) made.push((await newCampaign(org, 1)).campaign);
    const newest = [...made].reverse().map((campaign) => campaign.id);
    const list = (query: string) => send<CampaignList & ErrorResponse>(org.key, 'GET', `/campaigns?${query}`);

    const all = await list('limit=100');
    expect(all.status).toBe(200);
    expect(all.body.data.map((campaign) => campaign.id)).toEqual(newest);
    expect(all.body.data[0]!.counters.contacts_total).toBe(1);
    expect(all.body.pagination).toEqual({ limit: 100, offset: 0, total: 5, has_more: false });
    const page = await list('limit=2&offset=2');
    expect(page.body.data.map((campaign) => campaign.id)).toEqual(newest.slice(2, 4));
    expect(page.body.pagination).toEqual({ limit: 2, offset: 2, total: 5, has_more: true });

    const after = await list(`limit=2&starting_after=${newest[1]}`);
    expect(after.body.data.map((campaign) => campaign.id)).toEqual(newest.slice(2, 4));
    expect(after.body.pagination).toEqual({ limit: 2, offset: 0, total: 5, has_more: true });
    const last = await list(`limit=2&starting_after=${newest[3]}`);
    expect(last.body.data.map((campaign) => campaign.id)).toEqual(newest.slice(4));
    expect(last.body.pagination.has_more).toBe(false);
    const before = await list(`limit=2&ending_before=${newest[3]}`);
    expect(before.body.data.map((campaign) => campaign.id)).toEqual(newest.slice(1, 3));
    expect(before.body.pagination.has_more).toBe(true);
    const head = await list(`limit=2&ending_before=${newest[1]}`);
    expect(head.body.data.map((campaign) => campaign.id)).toEqual(newest.slice(0, 1));
    expect(head.body.pagination.has_more).toBe(false);

    await send(org.key, 'POST', `/campaigns/${newest[2]}/pause`);
    const paused = await list('status=paused');
    expect(paused.body.data.map((campaign) => campaign.id)).toEqual([newest[2]]);
    expect(paused.body.pagination.total).toBe(1);
    expect((await list('status=running')).body.data).toEqual([]);

    for (const cursor of ['starting_after', 'ending_before']) {
      const unknown = await list(`${cursor}=${randomUUID()}`);
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatchObject({ code: 'invalid_request', param: cursor });
    }
    const bad = await list('status=sleeping');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('status');
  });
});

describe('GET /campaigns/{id}/contacts', () => {
  it('pages in the campaign order by offset and by both cursors, and refuses a contact of no page', async () => {
    const org = await newOrg();
    const { campaign, ids } = await newCampaign(org, 5);
    const positions = (answer: { body: CampaignContactList }) => answer.body.data.map((item) => item.contact_id);
    expect(positions(await contactsOf(org, campaign.id))).toEqual(ids);
    const page = await contactsOf(org, campaign.id, 'limit=2&offset=1');
    expect(positions(page)).toEqual(ids.slice(1, 3));
    expect(page.body.pagination).toEqual({ limit: 2, offset: 1, total: 5, has_more: true });
    const after = await contactsOf(org, campaign.id, `limit=2&starting_after=${ids[2]}`);
    expect(positions(after)).toEqual(ids.slice(3, 5));
    expect(after.body.pagination).toEqual({ limit: 2, offset: 0, total: 5, has_more: false });
    const before = await contactsOf(org, campaign.id, `limit=2&ending_before=${ids[3]}`);
    expect(positions(before)).toEqual(ids.slice(1, 3));
    expect(before.body.pagination.has_more).toBe(true);
    const head = await contactsOf(org, campaign.id, `limit=3&ending_before=${ids[1]}`);
    expect(positions(head)).toEqual(ids.slice(0, 1));
    expect(head.body.pagination.has_more).toBe(false);

    // A contact of the org that is not in this campaign names no item of the list.
    const outsider = await addContact(org);
    for (const cursor of ['starting_after', 'ending_before']) {
      const refused = await contactsOf(org, campaign.id, `${cursor}=${outsider}`);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ code: 'invalid_request', param: cursor });
    }
    const both = await contactsOf(org, campaign.id, `starting_after=${ids[0]}&ending_before=${ids[2]}`);
    expect(both.status).toBe(400);
    expect(both.body.error.param).toBe('ending_before');
  });
});

describe('counters', () => {
  it('add up over every state, with the calls the campaign placed and what they cost', async () => {
    const org = await newOrg();
    const { campaign, ids } = await newCampaign(org, 9);
    const states = ['calling', 'completed', 'failed', 'no_answer', 'busy', 'expired', 'canceled', 'skipped'];
    for (const [index, state] of states.entries()) await setState(campaign.id, ids[index]!, state);
    // Two calls of the campaign (a retry included) and one call outside it.
    const placed: string[] = [];
    for (const last of ['4001', '4002', '4003']) {
      const call = await send<{ data: { id: string } }>(org.key, 'POST', '/calls', {
        agent_id: org.agentId,
        to_e164: testNumber(last),
      });
      expect(call.status).toBe(201);
      placed.push(call.body.data.id);
    }
    for (const [attempt, callId] of placed.slice(0, 2).entries()) {
      await sql`UPDATE calls SET campaign_id = ${campaign.id}, campaign_contact_id = ${ids[1]},
                campaign_attempt = ${attempt + 1}, credits_debited_paise = ${100 + attempt}
                WHERE id = ${callId}`.execute(database.db);
    }
    await setState(
      campaign.id,
      ids[1]!,
      'completed',
      sql`, attempts = 2, last_call_id = ${placed[1]}, last_outcome = 'completed'`,
    );
    await setState(
      campaign.id,
      ids[2]!,
      'failed',
      sql`, attempts = 1, last_outcome = 'failed', last_reason = 'carrier_rejected'`,
    );

    const read = await send<Answer>(org.key, 'GET', `/campaigns/${campaign.id}`);
    expect(read.status).toBe(200);
    expect(read.body.data.counters).toEqual({
      contacts_total: 9,
      pending: 1,
      in_progress: 1,
      completed: 1,
      failed: 1,
      no_answer: 1,
      busy: 1,
      expired: 1,
      canceled: 1,
      skipped: { total: 1, suppressed: 1, consent_excluded: 0 },
      calls_placed: 2,
      credits_charged_paise: 201,
    });
    expect(sumOf(read.body.data.counters)).toBe(9);
    const listed = (await send<CampaignList>(org.key, 'GET', '/campaigns')).body.data[0]!;
    expect(listed.counters).toEqual(read.body.data.counters);

    const contacts = (await contactsOf(org, campaign.id)).body.data;
    expect(contacts.map((item) => item.state)).toEqual([
      'in_progress',
      'completed',
      'failed',
      'no_answer',
      'busy',
      'expired',
      'canceled',
      'skipped',
      'pending',
    ]);
    expect(contacts[1]).toMatchObject({
      attempts: 2,
      last_call_id: placed[1],
      last_outcome: 'completed',
      last_reason: null,
    });
    expect(contacts[2]).toMatchObject({ attempts: 1, last_outcome: 'failed', last_reason: 'carrier_rejected' });
    expect(contacts[7]).toMatchObject({ skip_reason: 'suppressed' });

    // The calls name their campaign; the other call none.
    const call = await send<{ data: Schemas['CallDetail'] }>(org.key, 'GET', `/calls/${placed[0]}`);
    expect(call.body.data.campaign_id).toBe(campaign.id);
    const calls = await send<Schemas['CallList']>(org.key, 'GET', '/calls?limit=100');
    expect(Object.fromEntries(calls.body.data.map((item) => [item.id, item.campaign_id]))).toEqual({
      [placed[0]!]: campaign.id,
      [placed[1]!]: campaign.id,
      [placed[2]!]: null,
    });
  });
});

describe('pause, resume and cancel', () => {
  const act = (org: TestOrg, id: string, action: string) => send<Answer>(org.key, 'POST', `/campaigns/${id}/${action}`);

  it('pauses a scheduled campaign on request, leaves a paused one as it is, and resumes it to scheduled or running', async () => {
    const org = await newOrg();
    const startsAt = new Date(clock.now().getTime() + 3_600_000).toISOString();
    const { campaign } = await newCampaign(org, 2, {
      schedule: { starts_at: startsAt, timezone: 'UTC', windows: [{ days: ['mon'], start: '00:00', end: '24:00' }] },
    });
    const paused = await act(org, campaign.id, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({ status: 'paused', paused_reason: 'requested' });
    const again = await act(org, campaign.id, 'pause');
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(paused.body.data);

    // Not started yet: back to scheduled.
    const resumed = await act(org, campaign.id, 'resume');
    expect(resumed.status).toBe(200);
    expect(resumed.body.data).toMatchObject({ status: 'scheduled', paused_reason: null });
    const noop = await act(org, campaign.id, 'resume');
    expect(noop.status).toBe(200);
    expect(noop.body.data).toEqual(resumed.body.data);

    // Once its start has passed: running.
    await sql`UPDATE campaigns SET starts_at = ${new Date(clock.now().getTime() - 1000)} WHERE id = ${campaign.id}`.execute(
      database.db,
    );
    expect((await act(org, campaign.id, 'pause')).body.data.status).toBe('paused');
    expect((await act(org, campaign.id, 'resume')).body.data).toMatchObject({ status: 'running', paused_reason: null });
    const running = await act(org, campaign.id, 'pause');
    expect(running.body.data).toMatchObject({ status: 'paused', paused_reason: 'requested' });
  });

  it('keeps the insufficient_credits reason on pause, and resume clears it', async () => {
    const org = await newOrg();
    const { campaign } = await newCampaign(org, 1);
    await sql`UPDATE campaigns SET status = 'paused', paused_reason = 'insufficient_credits' WHERE id = ${campaign.id}`.execute(
      database.db,
    );
    const paused = await act(org, campaign.id, 'pause');
    expect(paused.status).toBe(200);
    expect(paused.body.data).toMatchObject({ status: 'paused', paused_reason: 'insufficient_credits' });
    expect((await act(org, campaign.id, 'resume')).body.data).toMatchObject({ status: 'running', paused_reason: null });
  });

  it('cancels with its pending contacts, leaves contacts being called, and refuses every action afterwards', async () => {
    const org = await newOrg();
    const { campaign, ids } = await newCampaign(org, 4);
    await setState(campaign.id, ids[0]!, 'calling');
    await setState(campaign.id, ids[1]!, 'completed');
    await sql`UPDATE campaign_contacts SET next_attempt_at = now() WHERE campaign_id = ${campaign.id} AND contact_id = ${ids[2]}`.execute(
      database.db,
    );
    await act(org, campaign.id, 'pause');
    const canceled = await act(org, campaign.id, 'cancel');
    expect(canceled.status).toBe(200);
    expect(canceled.body.data).toMatchObject({
      status: 'canceled',
      paused_reason: null,
      finished_at: null,
      counters: { contacts_total: 4, pending: 0, in_progress: 1, completed: 1, canceled: 2 },
    });
    const contacts = (await contactsOf(org, campaign.id)).body.data;
    expect(contacts.map((item) => [item.state, item.next_attempt_at])).toEqual([
      ['in_progress', null],
      ['completed', null],
      ['canceled', null],
      ['canceled', null],
    ]);
    for (const action of ['pause', 'resume', 'cancel']) {
      const refused = await act(org, campaign.id, action);
      expect(refused.status, action).toBe(409);
      expect(refused.body.error.code).toBe('invalid_state');
      expect(refused.body.error.message).toContain('canceled');
    }
    expect((await send<Answer>(org.key, 'GET', `/campaigns/${campaign.id}`)).body.data.status).toBe('canceled');
  });

  it('refuses every action on a completed campaign, and cancels a scheduled one', async () => {
    const org = await newOrg();
    const { campaign } = await newCampaign(org, 1);
    await sql`UPDATE campaigns SET status = 'completed' WHERE id = ${campaign.id}`.execute(database.db);
    for (const action of ['pause', 'resume', 'cancel']) {
      const refused = await act(org, campaign.id, action);
      expect(refused.status, action).toBe(409);
      expect(refused.body.error.code).toBe('invalid_state');
    }
    const scheduled = (await newCampaign(org, 1)).campaign;
    expect((await act(org, scheduled.id, 'cancel')).body.data).toMatchObject({
      status: 'canceled',
      counters: { canceled: 1 },
    });
  });
});

describe('GET /calls?campaign_id=', () => {
  type CallPage = Schemas['CallList'] & ErrorResponse;
  let org: TestOrg;
  let campaignId: string;
  /** The campaign's calls by the status each is put in. */
  const byStatus = new Map<string, string[]>();

  const listCalls = (caller: TestOrg, query: string) => send<CallPage>(caller.key, 'GET', `/calls?${query}`);

  /** Places a call through the API; returns its id. */
  async function placeCall(caller: TestOrg): Promise<string> {
    const call = await send<{ data: { id: string } }>(caller.key, 'POST', '/calls', {
      agent_id: caller.agentId,
      to_e164: testNumber('4101'),
    });
    expect(call.status).toBe(201);
    return call.body.data.id;
  }

  /** Ends a queued call as the progress worker would, in one UPDATE of its status (which the counters follow). */
  async function endCall(callId: string, status: string) {
    await sql`UPDATE calls SET status = ${status}, ended_at = now(), next_step_at = NULL WHERE id = ${callId}`.execute(
      database.db,
    );
  }

  /** The campaign's calls as the unfiltered list shows them, in its order. */
  async function campaignCallsListed(): Promise<string[]> {
    const all = await listCalls(org, 'limit=100');
    return all.body.data.filter((call) => call.campaign_id === campaignId).map((call) => call.id);
  }

  beforeAll(async () => {
    org = await newOrg();
    const { campaign, ids } = await newCampaign(org, 3);
    campaignId = campaign.id;
    const other = (await newCampaign(org, 1)).campaign;
    // Seven calls of the campaign (retries of its three contacts), one of another campaign, two of none.
    const plan = ['busy', 'busy', 'busy', 'completed', 'completed', 'failed', 'queued'];
    for (const [index, status] of plan.entries()) {
      const callId = await placeCall(org);
      await sql`UPDATE calls SET campaign_id = ${campaignId}, campaign_contact_id = ${ids[index % 3]},
                campaign_attempt = ${Math.floor(index / 3) + 1} WHERE id = ${callId}`.execute(database.db);
      if (status !== 'queued') await endCall(callId, status);
      byStatus.set(status, [...(byStatus.get(status) ?? []), callId]);
      if (index === 3) {
        const elsewhere = await placeCall(org);
        await sql`UPDATE calls SET campaign_id = ${other.id}, campaign_contact_id = ${other.id}, campaign_attempt = 1
                  WHERE id = ${elsewhere}`.execute(database.db);
        await endCall(elsewhere, 'busy');
        await placeCall(org);
      }
    }
    await placeCall(org);
  });

  it("lists only the campaign's calls, newest first, with their total", async () => {
    const expected = await campaignCallsListed();
    expect(expected).toHaveLength(7);
    const page = await listCalls(org, `campaign_id=${campaignId}`);
    expect(page.status).toBe(200);
    expect(page.body.data.map((call) => call.id)).toEqual(expected);
    expect(page.body.data.every((call) => call.campaign_id === campaignId)).toBe(true);
    expect(page.body.pagination).toEqual({ limit: 50, offset: 0, total: 7, has_more: false });
  });

  it('combines with status: ended and not-yet-ended statuses, and one with no call', async () => {
    for (const [status, total] of [
      ['busy', 3],
      ['completed', 2],
      ['failed', 1],
      ['queued', 1],
      ['in_progress', 0],
      ['canceled', 0],
    ] as const) {
      const page = await listCalls(org, `campaign_id=${campaignId}&status=${status}`);
      expect(page.status, status).toBe(200);
      expect(page.body.data.map((call) => call.id).sort(), status).toEqual([...(byStatus.get(status) ?? [])].sort());
      expect(page.body.pagination, status).toEqual({ limit: 50, offset: 0, total, has_more: false });
    }
  });

  it('pages by offset and by both cursors with the filter kept', async () => {
    const expected = await campaignCallsListed();
    const walked: string[] = [];
    for (let offset = 0; offset < 7; offset += 3) {
      const page = await listCalls(org, `campaign_id=${campaignId}&limit=3&offset=${offset}`);
      expect(page.body.pagination).toEqual({ limit: 3, offset, total: 7, has_more: offset + 3 < 7 });
      walked.push(...page.body.data.map((call) => call.id));
    }
    expect(walked).toEqual(expected);

    const cursorWalk: string[] = [];
    let after: string | undefined;
    for (;;) {
      const cursor = after ? `&starting_after=${after}` : '';
      const page = await listCalls(org, `campaign_id=${campaignId}&limit=2${cursor}`);
      expect(page.body.pagination.total).toBe(7);
      cursorWalk.push(...page.body.data.map((call) => call.id));
      if (!page.body.pagination.has_more) break;
      after = page.body.data.at(-1)!.id;
    }
    expect(cursorWalk).toEqual(expected);

    const before = await listCalls(org, `campaign_id=${campaignId}&limit=2&ending_before=${expected[4]}`);
    expect(before.body.data.map((call) => call.id)).toEqual(expected.slice(2, 4));
    expect(before.body.pagination).toEqual({ limit: 2, offset: 0, total: 7, has_more: true });

    // With a status too: the busy calls two at a time.
    const busy = expected.filter((id) => byStatus.get('busy')!.includes(id));
    const first = await listCalls(org, `campaign_id=${campaignId}&status=busy&limit=2`);
    expect(first.body.data.map((call) => call.id)).toEqual(busy.slice(0, 2));
    expect(first.body.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: true });
    const next = await listCalls(org, `campaign_id=${campaignId}&status=busy&limit=2&starting_after=${busy[1]}`);
    expect(next.body.data.map((call) => call.id)).toEqual(busy.slice(2));
    expect(next.body.pagination).toEqual({ limit: 2, offset: 0, total: 3, has_more: false });
  });

  it('keeps the total right as a call of the campaign ends', async () => {
    const [queued] = byStatus.get('queued')!;
    await endCall(queued!, 'completed');
    byStatus.set('completed', [...byStatus.get('completed')!, queued!]);
    byStatus.set('queued', []);
    expect((await listCalls(org, `campaign_id=${campaignId}`)).body.pagination.total).toBe(7);
    expect((await listCalls(org, `campaign_id=${campaignId}&status=completed`)).body.pagination.total).toBe(3);
    expect((await listCalls(org, `campaign_id=${campaignId}&status=queued`)).body.pagination.total).toBe(0);
  });

  it('refuses a malformed campaign_id with invalid_request naming it', async () => {
    for (const value of ['not-a-uuid', '', `${campaignId}0`]) {
      const answer = await listCalls(org, `campaign_id=${encodeURIComponent(value)}`);
      expect(answer.status, value).toBe(400);
      expect(answer.body.error, value).toMatchObject({ code: 'invalid_request', param: 'campaign_id' });
    }
  });

  it("answers another org's, the other mode's and an unknown campaign with not_found naming campaign_id", async () => {
    const stranger = await newOrg();
    const theirs = (await newCampaign(stranger, 1)).campaign;
    const { key } = await issueApiKey(database.db, org.orgId, { mode: 'test' });
    const orgTest: TestOrg = { orgId: await orgForMode(database.db, org.orgId, 'test'), agentId: org.agentId, key };
    const testCampaign = (await newCampaign(orgTest, 1)).campaign;
    const tries: Array<[string, TestOrg, string]> = [
      ['another org', org, theirs.id],
      ['a live key, a test campaign', org, testCampaign.id],
      ['a test key, a live campaign', orgTest, campaignId],
      ['unknown', org, randomUUID()],
      // Checked before the cursor, which names no call of the list either.
      ['another org, with an unknown cursor', org, `${theirs.id}&starting_after=${randomUUID()}`],
    ];
    for (const [label, caller, id] of tries) {
      const answer = await listCalls(caller, `campaign_id=${id}`);
      expect(answer.status, label).toBe(404);
      expect(answer.body.error, label).toEqual({
        code: 'not_found',
        message: 'No campaign with this id exists in your organisation.',
        param: 'campaign_id',
      });
    }
    // Each side still lists its own campaign's calls (none yet for the new ones).
    expect((await listCalls(orgTest, `campaign_id=${testCampaign.id}`)).body.pagination.total).toBe(0);
    expect((await listCalls(stranger, `campaign_id=${theirs.id}`)).body.pagination.total).toBe(0);
  });
});

describe('isolation', () => {
  it("answers another org's, the other mode's and an unknown campaign id with not_found, changing nothing", async () => {
    const a = await newOrg();
    const b = await newOrg();
    const { key } = await issueApiKey(database.db, a.orgId, { mode: 'test' });
    const aTest: TestOrg = { orgId: await orgForMode(database.db, a.orgId, 'test'), agentId: a.agentId, key };
    const own = (await newCampaign(a, 1)).campaign;
    const theirs = (await newCampaign(b, 1)).campaign;
    const testOwn = (await newCampaign(aTest, 1)).campaign;
    expect(testOwn.agent_id).toBe(a.agentId);
    const tries: Array<[TestOrg, string]> = [
      [a, theirs.id],
      [a, testOwn.id],
      [aTest, own.id],
      [a, randomUUID()],
    ];
    for (const [caller, id] of tries) {
      for (const [method, path] of [
        ['GET', `/campaigns/${id}`],
        ['GET', `/campaigns/${id}/contacts`],
        ['POST', `/campaigns/${id}/pause`],
        ['POST', `/campaigns/${id}/resume`],
        ['POST', `/campaigns/${id}/cancel`],
      ] as const) {
        const answer = await send<ErrorResponse>(caller.key, method, path);
        expect(answer.status, `${method} ${path}`).toBe(404);
        expect(answer.body.error).toMatchObject({ code: 'not_found', param: 'id' });
      }
    }
    expect((await send<CampaignList>(aTest.key, 'GET', '/campaigns')).body.data.map((item) => item.id)).toEqual([
      testOwn.id,
    ]);
    expect((await send<CampaignList>(a.key, 'GET', '/campaigns')).body.data.map((item) => item.id)).toEqual([own.id]);
    expect((await send<Answer>(b.key, 'GET', `/campaigns/${theirs.id}`)).body.data.status).toBe('scheduled');
    // A test key cannot choose the live org's contacts.
    const live = await addContact(a);
    const refused = await create(aTest, campaignBody(aTest, { contact_ids: [live] }));
    expect(refused.status).toBe(404);
    expect(refused.body.error.param).toBe('contacts.contact_ids.0');
  });
});
