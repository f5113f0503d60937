// GET /events and GET /events/{id} over HTTP: each event exactly as it was delivered, test events only
// when asked for, the kind and time filters, offset and cursor pages (also while events arrive), bad
// page parameters, and another org's events answered as unknown.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents } from '../src/webhooks/event-queries.js';
import { newEventId } from '../src/webhooks/outbox.js';
import { createTestOrg, rawRequest, type TestOrg } from './support/app.js';
import { parseJson, type Schemas } from './support/json.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';
import { contactCreated, emit, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';

let env: WebhookEnv;
let target: Receiver;
/** An org whose events are written with chosen times, for the filters and pages. */
let timed: TestOrg;
/** The ids of timed's events, newest first. */
const timedIds: string[] = [];
const BASE = Date.parse('2026-11-20T00:00:00.000Z');
const HOUR = 3_600_000;

type Failure = Schemas['ErrorResponse'];

/** GET `path` as `key`'s org; the body is an event list unless the caller declares otherwise. */
const get = <T = Schemas['EventList']>(path: string, key = timed.key) =>
  rawRequest<T>(env.app, 'GET', path, { headers: { Authorization: `Bearer ${key}` } });

const idsOf = (body: { data: Array<{ id: string }> }) => body.data.map((event) => event.id);

beforeAll(async () => {
  env = await webhookEnv();
  env.worker({ start: true, sweepIntervalMs: 60_000 });
  target = await startReceiver();
  timed = await createTestOrg(env.database.db, { planId: 'scale' });
  // Ten events an hour apart, alternating kinds, the first two at the same instant (ties go by id).
  const events = Array.from({ length: 10 }, (_, index) => ({
    id: newEventId(),
    orgId: timed.orgId,
    kind: index % 2 === 0 ? 'contact.created' : 'call.canceled',
    data:
      index % 2 === 0
        ? contactCreated(`Person ${index}`)
        : { call_id: crypto.randomUUID(), provider_call_id: 'sim_1', status: 'canceled', reason: 'canceled_by_client' },
    createdAt: new Date(BASE + Math.max(0, index - 1) * HOUR),
  }));
  await insertEvents(env.database.db, events);
  const sorted = [...events].sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1));
  timedIds.push(...sorted.map((event) => event.id));
});

afterAll(async () => {
  await target?.close();
  await env?.close();
});

describe('an event as delivered', () => {
  it('is returned by GET /events/{id} and listed, exactly as the delivery body, and linked from the log', async () => {
    const { id: webhookId } = await register(env, target.url, ['contact.created']);
    const eventId = await emit(env, 'contact.created', contactCreated());
    const [request] = await target.waitFor(1);
    const delivered = parseJson<Schemas['WebhookEvent']>(request!.rawBody);
    expect(delivered.id).toBe(eventId);

    const one = await get<Schemas['EventResponse']>(`/events/${eventId}`, env.org.key);
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ data: delivered });

    const list = await get('/events', env.org.key);
    expect(list.body.data).toEqual([delivered]);

    const log = await get<Schemas['WebhookDeliveryList']>(`/webhooks/${webhookId}/deliveries`, env.org.key);
    const linked = await get<Schemas['EventResponse']>(`/events/${log.body.data[0]!.event_id}`, env.org.key);
    expect(linked.body.data).toEqual(delivered);
  });

  it('includes webhook.test events only when asked for by kind; GET /events/{id} returns them', async () => {
    const test = await startReceiver();
    try {
      const { id } = await register(env, test.url, ['call.completed']);
      const sent = await rawRequest(env.app, 'POST', `/webhooks/${id}/test`, {
        headers: { Authorization: `Bearer ${env.org.key}` },
      });
      expect(sent.status).toBe(200);
      const delivered = parseJson<Schemas['WebhookEvent']>(test.requests[0]!.rawBody);
      expect((await get('/events', env.org.key)).body.data.map((e) => e.event)).not.toContain('webhook.test');
      const tests = await get('/events?kind=webhook.test', env.org.key);
      expect(tests.body.data).toEqual([delivered]);
      expect((await get<Schemas['EventResponse']>(`/events/${delivered.id}`, env.org.key)).body.data).toEqual(
        delivered,
      );
    } finally {
      await test.close();
    }
  });
});

describe('GET /events filters and pages', () => {
  it('lists newest first, ties by id descending, with the total', async () => {
    const { status, body } = await get('/events');
    expect(status).toBe(200);
    expect(idsOf(body)).toEqual(timedIds);
    expect(body.pagination).toEqual({ limit: 50, offset: 0, total: 10, has_more: false });
  });

  it('filters by kind and by creation time (both bounds exclusive)', async () => {
    const canceled = await get('/events?kind=call.canceled');
    expect(body(canceled).every((event) => event.event === 'call.canceled')).toBe(true);
    expect(canceled.body.pagination.total).toBe(5);

    const after = new Date(BASE + 2 * HOUR).toISOString();
    const before = new Date(BASE + 6 * HOUR).toISOString();
    const window = await get(`/events?created_after=${after}&created_before=${before}`);
    expect(body(window).map((event) => event.created_at)).toEqual(
      [5, 4, 3].map((hours) => new Date(BASE + hours * HOUR).toISOString()),
    );
    const both = await get(`/events?kind=contact.created&created_after=${after}&created_before=${before}`);
    expect(body(both).map((event) => event.created_at)).toEqual(
      [5, 3].map((hours) => new Date(BASE + hours * HOUR).toISOString()),
    );
  });

  it('compares times as events show them: to the millisecond, strictly on both sides', async () => {
    // PostgreSQL keeps microseconds; the API shows milliseconds. An event is not after (nor before) the
    // time it shows, so a client catching up from the last created_at it saw does not get it again.
    const org = await createTestOrg(env.database.db, { planId: 'scale' });
    const id = newEventId();
    await insertEvents(env.database.db, [
      { id, orgId: org.orgId, kind: 'contact.created', data: contactCreated('Micro'), createdAt: new Date(BASE) },
    ]);
    await sql`UPDATE events SET created_at = '2026-11-20T00:00:00.973750Z' WHERE id = ${id}`.execute(env.database.db);
    const shown = (await get<Schemas['EventResponse']>(`/events/${id}`, org.key)).body.data.created_at;
    expect(shown).toBe('2026-11-20T00:00:00.973Z');
    const listed = async (query: string) => idsOf((await get(`/events?${query}`, org.key)).body);
    expect(await listed(`created_after=${shown}`)).toEqual([]);
    expect(await listed(`created_before=${shown}`)).toEqual([]);
    expect(await listed('created_after=2026-11-20T00:00:00.972Z')).toEqual([id]);
    expect(await listed('created_before=2026-11-20T00:00:00.974Z')).toEqual([id]);
  });

  it('pages by offset and by cursor in both directions', async () => {
    const second = await get('/events?limit=3&offset=3');
    expect(idsOf(second.body)).toEqual(timedIds.slice(3, 6));
    expect(second.body.pagination).toEqual({ limit: 3, offset: 3, total: 10, has_more: true });

    const after = await get(`/events?limit=3&starting_after=${timedIds[2]}`);
    expect(idsOf(after.body)).toEqual(timedIds.slice(3, 6));
    expect(after.body.pagination).toEqual({ limit: 3, offset: 0, total: 10, has_more: true });
    const last = await get(`/events?limit=3&starting_after=${timedIds[6]}`);
    expect(idsOf(last.body)).toEqual(timedIds.slice(7));
    expect(last.body.pagination.has_more).toBe(false);

    const before = await get(`/events?limit=3&ending_before=${timedIds[6]}`);
    expect(idsOf(before.body)).toEqual(timedIds.slice(3, 6));
    expect(before.body.pagination.has_more).toBe(true);
    const first = await get(`/events?limit=3&ending_before=${timedIds[2]}`);
    expect(idsOf(first.body)).toEqual(timedIds.slice(0, 2));
    expect(first.body.pagination.has_more).toBe(false);
  });

  it('neither repeats nor skips an event with cursors while new events arrive', async () => {
    const org = await createTestOrg(env.database.db, { planId: 'scale' });
    const emitted: string[] = [];
    for (let i = 0; i < 5; i += 1) emitted.push(await emit(env, 'contact.created', contactCreated(), org.orgId));
    const seen: string[] = [];
    let page = await get('/events?limit=2', org.key);
    for (;;) {
      seen.push(...idsOf(page.body));
      // A new event between page requests: with offset paging it would push the next page down by one.
      await emit(env, 'contact.created', contactCreated(), org.orgId);
      if (!page.body.pagination.has_more) break;
      page = await get(`/events?limit=2&starting_after=${seen.at(-1)}`, org.key);
    }
    expect(seen).toEqual([...emitted].reverse());
  });
});

describe('bad page parameters', () => {
  it.each([
    ['both cursors', `starting_after=ID&ending_before=ID`, 'ending_before'],
    ['a cursor with an offset', 'starting_after=ID&offset=2', 'starting_after'],
    ['an unknown cursor', 'starting_after=evt_000000000000000000000000', 'starting_after'],
    ['an unknown ending cursor', 'ending_before=evt_000000000000000000000000', 'ending_before'],
    ['a malformed cursor', 'starting_after=42', 'starting_after'],
    ['an unknown kind', 'kind=call.exploded', 'kind'],
    ['a malformed time', 'created_after=yesterday', 'created_after'],
    ['a leap second', 'created_before=2016-12-31T23:59:60Z', 'created_before'],
    ['a time past the year 9999 in UTC', 'created_after=9999-12-31T23:59:59-14:00', 'created_after'],
  ])('%s is invalid_request naming the parameter', async (_name, query, param) => {
    const { status, body } = await get<Failure>(`/events?${query.replaceAll('ID', timedIds[0]!)}`);
    expect(status).toBe(400);
    expect(body.error).toMatchObject({ code: 'invalid_request', param });
  });

  it('accepts a cursor with offset=0', async () => {
    const { status, body } = await get(`/events?offset=0&starting_after=${timedIds[0]}&limit=1`);
    expect(status).toBe(200);
    expect(idsOf(body)).toEqual([timedIds[1]]);
  });
});

describe("another org's events", () => {
  it('are not_found, not listed, and not a valid cursor', async () => {
    const stranger = timedIds[0]!;
    const one = await get<Failure>(`/events/${stranger}`, env.org.key);
    expect(one.status).toBe(404);
    expect(one.body.error).toMatchObject({ code: 'not_found', param: 'id' });
    expect(idsOf((await get('/events', env.org.key)).body)).not.toContain(stranger);
    const cursor = await get<Failure>(`/events?starting_after=${stranger}`, env.org.key);
    expect(cursor.status).toBe(400);
    expect(cursor.body.error).toMatchObject({ code: 'invalid_request', param: 'starting_after' });
  });

  it('an unknown id is not_found too', async () => {
    const { status } = await get('/events/evt_000000000000000000000000');
    expect(status).toBe(404);
  });
});

/** The events of a list response. */
function body(response: { body: { data: Array<{ event: string; created_at: string }> } }) {
  return response.body.data;
}
