// Test mode through the real HTTP API, PostgreSQL and the operator CLI: a test key's calls reach only
// the simulator and its own balance (never the agent's real provider or the live credits), events say
// their mode and reach only endpoints of that mode, each mode has its own rate-limit window, and the
// operator's commands for test keys and the test balance. The matrix of foreign-mode ids answered 404
// is in isolation.test.ts.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../generated/openapi.js';
import { issueApiKey } from '../src/orgs/api-keys.js';
import { OPENING_TEST_BALANCE_PAISE, orgForMode } from '../src/orgs/modes.js';
import { createOrg, createPlan } from '../src/orgs/service.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { ledgerOfCall, testNumber, waitFor, waitForCall } from './support/calls.js';
import { runAdmin } from './support/cli.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { parseJson, type ErrorResponse } from './support/json.js';
import { startVapiFake, type VapiFake } from './support/vapi-fake.js';
import { answer, startReceiver, testTls, type Receiver } from './support/webhook-receiver.js';

type Schemas = components['schemas'];

let database: TestDatabase;
let app: TestApp;
let fake: VapiFake;
let receiver: Receiver;

beforeAll(async () => {
  database = await createTestDatabase();
  fake = await startVapiFake();
  receiver = await startReceiver(answer(200));
  app = await startTestApp(database, {
    config: {
      simulatorStepMs: 20,
      vapiApiKey: 'vapi-test-mode-key',
      vapiWebhookSecret: 'whsec-test-mode',
      vapiBaseUrl: fake.url,
      webhookPrivateAllowlist: ['127.0.0.0/8'],
      webhookCaCerts: [(await testTls()).caCert],
    },
  });
});

afterAll(async () => {
  await app?.close();
  await receiver?.close();
  await fake?.stop();
  await database?.drop();
});

async function balanceOf(orgId: string): Promise<number> {
  const row = await database.db
    .selectFrom('orgs')
    .select('balance_paise')
    .where('id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.balance_paise);
}

/** A live org whose agent uses Vapi, with a live key (`live`) and a test key (`test`, its twin's id as orgId). */
async function vapiOrg(): Promise<{ live: TestOrg; test: TestOrg }> {
  const live = await createTestOrg(database.db, {
    credits: 50_000,
    planId: 'scale',
    agent: { provider: 'vapi', providerSettings: { assistantId: 'asst-tm', phoneNumberId: 'pn-tm' } },
  });
  const { key } = await issueApiKey(database.db, live.orgId, { mode: 'test' });
  return { live, test: { orgId: await orgForMode(database.db, live.orgId, 'test'), agentId: live.agentId, key } };
}

async function place(org: TestOrg, last4 = '0000') {
  return rawRequest<{ data: Schemas['CallCreated'] } & ErrorResponse>(app, 'POST', '/calls', {
    headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ agent_id: org.agentId, to_e164: testNumber(last4) }),
  });
}

describe('a test key', () => {
  it("places its calls with the simulator, whatever the agent's provider, and spends only test credits", async () => {
    const { live, test } = await vapiOrg();
    const vapiRequests = fake.received.length;
    const liveBefore = await balanceOf(live.orgId);
    const testBefore = await balanceOf(test.orgId);
    expect(testBefore).toBe(OPENING_TEST_BALANCE_PAISE);

    const created = await place(test);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.data.provider).toBe('simulator');
    const ended = await waitForCall(database.db, app.client(test.key), created.body.data.id);
    expect(ended.provider).toBe('simulator');
    expect(ended.status).toBe('completed');

    // Vapi heard nothing of it; the live balance did not move; the test balance paid the charge.
    expect(fake.received.slice(vapiRequests)).toEqual([]);
    expect(await balanceOf(live.orgId)).toBe(liveBefore);
    const ledger = await ledgerOfCall(database.db, created.body.data.id);
    const charged = -ledger.filter((row) => row.kind === 'charge').reduce((sum, row) => sum + row.amount_paise, 0);
    expect(charged).toBeGreaterThan(0);
    expect(await balanceOf(test.orgId)).toBe(testBefore - charged);

    // The same agent with the live key goes to Vapi and holds live credits: the route is the key's mode.
    const real = await place(live);
    expect(real.status, JSON.stringify(real.body)).toBe(201);
    expect(real.body.data.provider).toBe('vapi');
    expect(fake.received.slice(vapiRequests).map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /call',
    ]);
    expect(await balanceOf(live.orgId)).toBeLessThan(liveBefore);
    expect(await balanceOf(test.orgId)).toBe(testBefore - charged);
  });

  it('lists the same agents as the live key, and sees only test calls', async () => {
    const { live, test } = await vapiOrg();
    const agents = async (org: TestOrg) =>
      (await app.client(org.key).GET('/agents')).data?.data.map((agent) => agent.id) ?? [];
    expect(await agents(test)).toEqual(await agents(live));
    expect(await agents(test)).toEqual([live.agentId]);

    const testCall = (await place(test)).body.data.id;
    const listed = async (org: TestOrg) =>
      (await app.client(org.key).GET('/calls', { params: { query: { limit: 100 } } })).data?.data.map(
        (call) => call.id,
      );
    expect(await listed(test)).toEqual([testCall]);
    expect(await listed(live)).toEqual([]);
  });

  it('rehearses insufficient_credits on an empty test balance while live calls go on', async () => {
    const live = await createTestOrg(database.db, { credits: 50_000 });
    const { key } = await issueApiKey(database.db, live.orgId, { mode: 'test' });
    const test = { ...live, key };
    const reset = await runAdmin(database.url, [
      'credits',
      'reset',
      '--org',
      live.orgId,
      '--mode',
      'test',
      '--paise',
      '0',
    ]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stdout).toContain('The test balance is now 0 paise.');

    const refused = await place(test);
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_credits');
    expect((await place(live)).status).toBe(201);

    // A reset without a balance returns to the opening one, and the test key can place again.
    const again = await runAdmin(database.url, ['credits', 'reset', '--org', live.orgId, '--mode', 'test', '--json']);
    expect(again.code, again.stderr).toBe(0);
    expect(parseJson<{ balance_paise: number; mode: string }>(again.stdout)).toMatchObject({
      balance_paise: OPENING_TEST_BALANCE_PAISE,
      mode: 'test',
    });
    expect((await place(test)).status).toBe(201);
  });

  it("is refused when its mode is written otherwise: svc_live_ with a test key's prefix and secret", async () => {
    const { test } = await vapiOrg();
    const forged = test.key.replace(/^svc_test_/, 'svc_live_');
    const answered = await rawRequest<ErrorResponse>(app, 'GET', '/calls', {
      headers: { Authorization: `Bearer ${forged}` },
    });
    expect(answered.status).toBe(401);
    expect(answered.body.error.code).toBe('unauthorized');
    const genuine = await rawRequest(app, 'GET', '/calls', { headers: { Authorization: `Bearer ${test.key}` } });
    expect(genuine.status).toBe(200);
  });
});

describe('events in test mode', () => {
  it('carry livemode and reach only the endpoints of their own mode', async () => {
    const { live, test } = await vapiOrg();
    const register = async (org: TestOrg, path: string) => {
      const created = await app.client(org.key).POST('/webhooks', {
        body: { url: `${receiver.url}/${path}`, events: ['contact.created'] },
      });
      expect(created.response.status).toBe(201);
    };
    await register(live, `live-${live.orgId}`);
    await register(test, `test-${live.orgId}`);
    const upsert = async (org: TestOrg, phone: string) => {
      const created = await app
        .client(org.key)
        .POST('/contacts', { body: { phone_e164: phone, name: 'Asha', consent_capture: 'website_form' } });
      expect(created.response.status).toBe(201);
      return created.data!.data.id;
    };
    const testContact = await upsert(test, testNumber('1111'));
    const liveContact = await upsert(live, testNumber('2222'));

    const byPath = async (path: string) => {
      await waitFor(`a delivery to ${path}`, () =>
        receiver.requests.some((request) => request.path === new URL(`${receiver.url}/${path}`).pathname),
      );
      return receiver.requests
        .filter((request) => request.path === new URL(`${receiver.url}/${path}`).pathname)
        .map((request) => parseJson<Schemas['ContactCreatedEvent']>(request.rawBody));
    };
    const toTest = await byPath(`test-${live.orgId}`);
    const toLive = await byPath(`live-${live.orgId}`);
    expect(toTest.map((event) => [event.data.contact_id, event.livemode])).toEqual([[testContact, false]]);
    expect(toLive.map((event) => [event.data.contact_id, event.livemode])).toEqual([[liveContact, true]]);

    // /events says the same, each key seeing only its own mode's events.
    const listed = async (org: TestOrg) =>
      (await app.client(org.key).GET('/events', { params: { query: { limit: 100 } } })).data!.data.map((event) => [
        event.event,
        event.livemode,
      ]);
    expect(await listed(test)).toEqual([['contact.created', false]]);
    expect(await listed(live)).toEqual([['contact.created', true]]);
  });
});

describe('rate limits', () => {
  it('count test-mode requests in a window of their own, with the plan’s limit', async () => {
    const planId = `tm-small-${Math.random().toString(36).slice(2, 8)}`;
    await createPlan(database.db, { id: planId, name: 'Small', rateLimitPerMinute: 3 });
    const live = await createTestOrg(database.db, { planId });
    const { key } = await issueApiKey(database.db, live.orgId, { mode: 'test' });
    const get = (bearer: string) =>
      rawRequest(app, 'GET', '/contacts', { headers: { Authorization: `Bearer ${bearer}` } });
    const liveAnswers = [];
    for (let i = 0; i < 4; i += 1) liveAnswers.push((await get(live.key)).status);
    expect(liveAnswers).toEqual([200, 200, 200, 429]);
    const testAnswer = await get(key);
    expect(testAnswer.status).toBe(200);
    expect(testAnswer.headers.get('x-ratelimit-limit')).toBe('3');
    expect(testAnswer.headers.get('x-ratelimit-remaining')).toBe('2');
  });
});

describe('the operator CLI', () => {
  it('creates test keys, lists keys with their mode, and never resets a live balance', async () => {
    const org = await createOrg(database.db, { name: 'CLI test mode', creditsPaise: 10_000, planId: 'starter' });
    const created = await runAdmin(database.url, ['key', 'create', '--org', org.id, '--mode', 'test', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const key = parseJson<{ key: string; prefix: string; mode: string }>(created.stdout);
    expect(key.key).toMatch(/^svc_test_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
    expect(key.mode).toBe('test');
    expect((await rawRequest(app, 'GET', '/calls', { headers: { Authorization: `Bearer ${key.key}` } })).status).toBe(
      200,
    );

    const listed = await runAdmin(database.url, ['key', 'list', '--org', org.id, '--json']);
    expect(parseJson<Array<{ prefix: string; mode: string; masked: string }>>(listed.stdout)).toEqual([
      expect.objectContaining({ prefix: key.prefix, mode: 'test', masked: `svc_test_${key.prefix}_${'*'.repeat(32)}` }),
    ]);

    for (const flags of [[], ['--mode', 'live']]) {
      const refused = await runAdmin(database.url, ['credits', 'reset', '--org', org.id, ...flags]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('--mode test is required');
    }
    const bad = await runAdmin(database.url, ['key', 'create', '--org', org.id, '--mode', 'sandbox']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--mode must be live or test');
    expect(await balanceOf(org.id)).toBe(10_000);

    const topUp = await runAdmin(database.url, ['credits', 'add', '--org', org.id, '--paise', '500', '--mode', 'test']);
    expect(topUp.code, topUp.stderr).toBe(0);
    expect(await balanceOf(await orgForMode(database.db, org.id, 'test'))).toBe(OPENING_TEST_BALANCE_PAISE + 500);
    expect(await balanceOf(org.id)).toBe(10_000);

    // The twin is no org of its own: not listed, and not accepted where an org id is asked for.
    const orgs = parseJson<Array<{ id: string }>>((await runAdmin(database.url, ['org', 'list', '--json'])).stdout);
    const twin = await orgForMode(database.db, org.id, 'test');
    expect(orgs.map((row) => row.id)).toContain(org.id);
    expect(orgs.map((row) => row.id)).not.toContain(twin);
    const onTwin = await runAdmin(database.url, ['key', 'create', '--org', twin]);
    expect(onTwin.code).toBe(1);
    expect(onTwin.stderr).toContain(`no org with id ${twin}`);

    // The audit log records the key's mode.
    const audit = await database.db
      .selectFrom('audit_log')
      .select(['action', 'livemode', 'target'])
      .where('org_id', '=', org.id)
      .execute();
    expect(audit).toEqual([
      { action: 'api_key.created', livemode: false, target: `svc_test_${key.prefix}_${'*'.repeat(32)}` },
    ]);
  });
});

describe("the operator CLI on a test endpoint's webhooks", () => {
  it("writes the org's audit log, in test mode, for a switch-off, a switch-on and a redelivery", async () => {
    const live = await createTestOrg(database.db, { planId: 'scale' });
    const { key } = await issueApiKey(database.db, live.orgId, { mode: 'test' });
    const client = app.client(key);
    const created = await client.POST('/webhooks', {
      body: { url: `${receiver.url}/operator-${live.orgId}`, events: ['contact.created'] },
    });
    expect(created.response.status).toBe(201);
    const webhookId = created.data!.data.id;
    const sent = await client.POST('/webhooks/{id}/test', { params: { path: { id: webhookId } } });
    expect(sent.response.status).toBe(200);
    const delivery = await waitFor('the test delivery to end', async () =>
      database.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('webhook_id', '=', webhookId)
        .where('status', '!=', 'pending')
        .executeTakeFirst(),
    );

    for (const args of [
      ['webhook', 'disable', webhookId],
      ['webhook', 'enable', webhookId],
      ['redeliver', delivery.id],
    ]) {
      const ran = await runAdmin(database.url, args);
      expect(ran.code, ran.stderr).toBe(0);
    }
    const entries = await database.db
      .selectFrom('audit_log')
      .select(['org_id', 'livemode', 'action'])
      .where('target', 'in', [webhookId, delivery.id])
      .orderBy('id')
      .execute();
    expect(entries).toEqual(
      ['webhook.disabled', 'webhook.enabled', 'webhook.redelivered'].map((action) => ({
        org_id: live.orgId,
        livemode: false,
        action,
      })),
    );
  });

  it('lists the endpoints of the mode asked for, and imports contacts into that mode', async () => {
    const live = await createTestOrg(database.db, { planId: 'scale' });
    const { key } = await issueApiKey(database.db, live.orgId, { mode: 'test' });
    const register = async (bearer: string, path: string) => {
      const created = await app.client(bearer).POST('/webhooks', {
        body: { url: `${receiver.url}/${path}`, events: ['contact.created'] },
      });
      expect(created.response.status).toBe(201);
      return created.data!.data.id;
    };
    const liveEndpoint = await register(live.key, `cli-live-${live.orgId}`);
    const testEndpoint = await register(key, `cli-test-${live.orgId}`);
    const listed = async (...flags: string[]) => {
      const ran = await runAdmin(database.url, ['webhook', 'list', '--org', live.orgId, ...flags, '--json']);
      expect(ran.code, ran.stderr).toBe(0);
      return parseJson<Array<{ id: string }>>(ran.stdout).map((endpoint) => endpoint.id);
    };
    expect(await listed()).toEqual([liveEndpoint]);
    expect(await listed('--mode', 'live')).toEqual([liveEndpoint]);
    expect(await listed('--mode', 'test')).toEqual([testEndpoint]);

    const dir = await mkdtemp(path.join(tmpdir(), 'test-mode-import-'));
    const file = path.join(dir, 'contacts.csv');
    const phone = testNumber('3333');
    await writeFile(file, `phone_e164,name,consent_capture\n${phone},Ravi,website_form\n`);
    try {
      const imported = await runAdmin(database.url, [
        'contacts',
        'import',
        '--org',
        live.orgId,
        '--mode',
        'test',
        file,
      ]);
      expect(imported.code, imported.stderr).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const phones = async (bearer: string) =>
      (await app.client(bearer).GET('/contacts', { params: { query: { limit: 100 } } })).data!.data.map(
        (contact) => contact.phone_e164,
      );
    expect(await phones(key)).toEqual([phone]);
    expect(await phones(live.key)).toEqual([]);
  });
});
