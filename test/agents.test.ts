// Agents through real HTTP: a client finds the agent_id values it may place calls with, page by page,
// and never another org's agents.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../src/orgs/service.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;
let other: TestOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  org = await createTestOrg(database.db, { planId: 'scale' });
  other = await createTestOrg(database.db);
  for (const name of ['Meera', 'Kabir']) {
    await createAgent(database.db, {
      orgId: org.orgId,
      name,
      language: 'hi-IN',
      maxDurationSec: 300,
      fromE164: '+918045678901',
    });
  }
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

describe('GET /agents', () => {
  it('lists the org’s agents newest first, with their call defaults, page by page', async () => {
    const client = app.client(org.key);
    const all = await client.GET('/agents');
    expect(all.response.status).toBe(200);
    expect(all.data?.pagination).toEqual({ limit: 50, offset: 0, total: 3, has_more: false });
    expect(all.data?.data.map((agent) => agent.name)).toEqual(['Kabir', 'Meera', 'Test agent']);
    expect(all.data?.data[0]).toMatchObject({
      language: 'hi-IN',
      max_duration_sec: 300,
      from_e164: '+918045678901',
      rate_paise_per_minute: 200,
    });
    expect(all.data?.data.map((agent) => agent.id)).toContain(org.agentId);

    const page = await client.GET('/agents', { params: { query: { limit: 1, offset: 1 } } });
    expect(page.data?.data.map((agent) => agent.name)).toEqual(['Meera']);
    expect(page.data?.pagination).toEqual({ limit: 1, offset: 1, total: 3, has_more: true });

    const theirs = await app.client(other.key).GET('/agents');
    expect(theirs.data?.data.map((agent) => agent.id)).toEqual([other.agentId]);
  });
});

describe('GET /agents/{id}', () => {
  it('answers an agent of the org, and not_found for another org’s', async () => {
    const mine = await app.client(org.key).GET('/agents/{id}', { params: { path: { id: org.agentId } } });
    expect(mine.response.status).toBe(200);
    expect(mine.data?.data).toMatchObject({ id: org.agentId, name: 'Test agent', from_e164: null });
    const foreign = await app.client(other.key).GET('/agents/{id}', { params: { path: { id: org.agentId } } });
    expect(foreign.response.status).toBe(404);
    expect(foreign.error).toMatchObject({ error: { code: 'not_found', param: 'id' } });
  });
});

describe('agent providers', () => {
  it('shows the provider name and never its settings', async () => {
    const mine = await createTestOrg(database.db);
    const agent = await createAgent(database.db, {
      orgId: mine.orgId,
      name: 'Vapi agent',
      provider: 'vapi',
      providerSettings: { assistantId: 'asst-secret-looking-id', phoneNumberId: 'pn-4242' },
    });
    const { data, response } = await app.client(mine.key).GET('/agents/{id}', { params: { path: { id: agent.id } } });
    expect(response.status).toBe(200);
    expect(data?.data.provider).toBe('vapi');
    expect(JSON.stringify(data)).not.toMatch(/asst-secret-looking-id|pn-4242|provider_settings/);
    const list = await app.client(mine.key).GET('/agents');
    expect(list.data?.data.map((entry) => entry.provider).sort()).toEqual(['simulator', 'vapi']);
  });
});
