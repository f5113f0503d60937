// Cursor pages (starting_after / ending_before) on every list over HTTP: paging through calls while new
// ones are placed neither repeats nor skips a call (offset pages do drift), both directions agree with
// the full list, and a cursor that is unknown, another org's, or combined with an offset or the other
// cursor is 400 invalid_request naming the parameter.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../src/orgs/service.js';
import { createTestOrg, rawRequest, type TestOrg } from './support/app.js';
import type { Schemas } from './support/json.js';
import { testNumber } from './support/calls.js';
import { contactCreated, emit, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';

let env: WebhookEnv;
/** An org holding five items of each list; the lists' paths for it. */
let owner: TestOrg;
let other: TestOrg;
const lists: Record<string, string> = {};

/** A page of any of the lists these tests walk, as far as they read it. */
interface Page {
  data: Array<{ id: string }>;
  pagination: Schemas['Pagination'];
}

/** GET `path` as `org`; the body is a list page unless the caller declares otherwise. */
const get = <T = Page>(path: string, org: TestOrg = owner) =>
  rawRequest<T>(env.app, 'GET', path, { headers: { Authorization: `Bearer ${org.key}` } });
/** POST `body` to `path` as `org`; the answer's body is a created item's envelope. */
const post = (path: string, body: unknown, org: TestOrg = owner) =>
  rawRequest<{ data: { id: string } }>(env.app, 'POST', path, {
    headers: { Authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const idsOf = (response: { body: { data: Array<{ id: string }> } }) => response.body.data.map((item) => item.id);
const join = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;

async function placeCall(org: TestOrg = owner): Promise<string> {
  const response = await post('/calls', { agent_id: org.agentId, to_e164: testNumber('7777') }, org);
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.data.id;
}

beforeAll(async () => {
  env = await webhookEnv();
  owner = env.org;
  other = await createTestOrg(env.database.db, { planId: 'scale' });
  const { id: webhookId } = await register(env, 'https://127.0.0.1:4/hooks', ['contact.created']);
  for (let i = 0; i < 4; i += 1) await register(env, `https://127.0.0.1:4/hooks/${i}`, ['contact.created']);
  for (let i = 0; i < 4; i += 1) await createAgent(env.database.db, { orgId: owner.orgId, name: `Agent ${i}` });
  for (let i = 0; i < 5; i += 1) {
    await placeCall();
    const contact = await post('/contacts', { phone_e164: `+9198765000${10 + i}`, consent_capture: 'manual' });
    expect(contact.status, JSON.stringify(contact.body)).toBeLessThan(300);
  }
  lists.calls = '/calls';
  lists.contacts = '/contacts';
  lists.webhooks = '/webhooks';
  lists.deliveries = `/webhooks/${webhookId}/deliveries`;
  lists.events = '/events';
  lists.agents = '/agents';
  // The other org's items, for the foreign-cursor checks.
  await placeCall(other);
  await post('/contacts', { phone_e164: '+919876500099', consent_capture: 'manual' }, other);
  await register(env, 'https://127.0.0.1:4/other', ['contact.created'], other.key);
  await emit(env, 'contact.created', contactCreated(), other.orgId);
});

afterAll(async () => {
  await env?.close();
});

describe('paging through calls while new ones are placed', () => {
  it('with starting_after sees every call that existed once, in order; offset pages repeat one', async () => {
    const existing = idsOf(await get('/calls'));
    const seen: string[] = [];
    let page = await get('/calls?limit=2');
    for (;;) {
      seen.push(...idsOf(page));
      await placeCall(); // arrives between page requests, at the head of the list
      if (!page.body.pagination.has_more) break;
      page = await get(`/calls?limit=2&starting_after=${seen.at(-1)}`);
      expect(page.body.pagination.offset).toBe(0);
    }
    expect(seen).toEqual(existing);

    // The same walk by offset drifts: the call placed before the second page pushes the first page's
    // last call onto it.
    const first = idsOf(await get('/calls?limit=2'));
    await placeCall();
    const second = idsOf(await get('/calls?limit=2&offset=2'));
    expect(second[0]).toBe(first[1]);

    // ending_before from the first call seen reaches back to the calls placed since.
    const newer = await get(`/calls?limit=100&ending_before=${existing[0]}`);
    const now = idsOf(await get('/calls?limit=100'));
    expect(idsOf(newer)).toEqual(now.slice(0, now.indexOf(existing[0]!)));
    expect(newer.body.pagination.has_more).toBe(false);
  });

  it('keeps the status filter on cursor pages', async () => {
    const queued = idsOf(await get('/calls?status=queued&limit=100'));
    const rest = await get(`/calls?status=queued&limit=100&starting_after=${queued[1]}`);
    expect(idsOf(rest)).toEqual(queued.slice(2));
    expect(rest.body.pagination.total).toBe(queued.length);
  });
});

describe.each(['calls', 'contacts', 'webhooks', 'deliveries', 'events', 'agents'])('the %s list', (name) => {
  it('pages by cursor in both directions exactly as the full list reads', async () => {
    const path = lists[name]!;
    const all = idsOf(await get(join(path, 'limit=100')));
    expect(all.length).toBeGreaterThanOrEqual(5);
    const seen: string[] = [];
    let page = await get(join(path, 'limit=2'));
    for (;;) {
      seen.push(...idsOf(page));
      if (!page.body.pagination.has_more) break;
      page = await get(join(path, `limit=2&starting_after=${seen.at(-1)}`));
    }
    expect(seen).toEqual(all);

    const before = await get(join(path, `limit=2&ending_before=${all[4]}`));
    expect(idsOf(before)).toEqual(all.slice(2, 4));
    expect(before.body.pagination).toMatchObject({ limit: 2, offset: 0, total: all.length, has_more: true });
    const head = await get(join(path, `limit=2&ending_before=${all[1]}`));
    expect(idsOf(head)).toEqual(all.slice(0, 1));
    expect(head.body.pagination.has_more).toBe(false);
  });

  it('refuses a bad cursor with invalid_request naming the parameter', async () => {
    const path = lists[name]!;
    const [own] = idsOf(await get(path));
    const foreignPath = name === 'deliveries' ? lists.deliveries! : path;
    const foreign = name === 'deliveries' ? undefined : idsOf(await get(foreignPath, other))[0];
    const unknown = name === 'events' ? 'evt_000000000000000000000000' : randomUUID();
    const cases: Array<[string, string]> = [
      [`starting_after=${unknown}`, 'starting_after'],
      [`ending_before=${unknown}`, 'ending_before'],
      [`starting_after=${own}&offset=1`, 'starting_after'],
      [`ending_before=${own}&offset=3`, 'ending_before'],
      [`starting_after=${own}&ending_before=${own}`, 'ending_before'],
      ...(foreign ? [[`starting_after=${foreign}`, 'starting_after'] as [string, string]] : []),
    ];
    for (const [query, param] of cases) {
      const response = await get<Schemas['ErrorResponse']>(join(path, query));
      expect(response.status, query).toBe(400);
      expect(response.body.error, query).toMatchObject({ code: 'invalid_request', param });
    }
  });
});

describe('a delivery of another endpoint', () => {
  it('is not a cursor of this endpoint’s log', async () => {
    const { id } = await register(env, 'https://127.0.0.1:4/second', ['contact.created']);
    await emit(env, 'contact.created', contactCreated());
    const [theirs] = idsOf(await get(`/webhooks/${id}/deliveries`));
    const response = await get<Schemas['ErrorResponse']>(join(lists.deliveries!, `starting_after=${theirs}`));
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({ code: 'invalid_request', param: 'starting_after' });
  });
});
