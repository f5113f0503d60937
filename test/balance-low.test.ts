// balance.low through the real HTTP API, PostgreSQL, the simulator and the operator CLI: one event per
// fall of the balance below the org's threshold, delivered to a subscribed HTTPS endpoint; none while
// the balance stays below; one more after a top-up and another fall; exactly one when twenty
// placements race across the threshold; none with the threshold at 0; test mode's own event from the
// test balance; a call's settlement never counted as a fall; and the CLI's `org update` flag.
//
// Calls stay queued here (the simulator's steps are an hour long), so each hold stays taken until the
// test cancels its call; the settlement test runs on an app of its own whose calls finish at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { components } from '../generated/openapi.js';
import { issueApiKey } from '../src/orgs/api-keys.js';
import { orgForMode, resetTestCredits } from '../src/orgs/modes.js';
import { DEFAULT_LOW_BALANCE_THRESHOLD_PAISE } from '../src/orgs/policy.js';
import { addCredits } from '../src/orgs/service.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { testNumber, waitFor, waitForCall } from './support/calls.js';
import { runAdmin } from './support/cli.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { parseJson } from './support/json.js';
import { answer, startReceiver, testTls, type Receiver } from './support/webhook-receiver.js';

type Schemas = components['schemas'];
type BalanceLow = Schemas['BalanceLowEvent'];

/** A default agent's hold: 600 s at 200 paise a minute. */
const HOLD = 2_000;

let database: TestDatabase;
let app: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  database = await createTestDatabase();
  receiver = await startReceiver(answer(200));
  app = await startTestApp(database, {
    config: {
      simulatorStepMs: 3_600_000,
      webhookPrivateAllowlist: ['127.0.0.0/8'],
      webhookCaCerts: [(await testTls()).caCert],
    },
  });
});

afterAll(async () => {
  await app?.close();
  await receiver?.close();
  await database?.drop();
});

/** Registers an endpoint of `org`'s mode for balance.low at its own path of the receiver; returns the path as received. */
async function subscribe(on: TestApp, org: TestOrg, name: string): Promise<string> {
  const url = `${receiver.url}/${name}-${org.orgId}`;
  const created = await on.client(org.key).POST('/webhooks', { body: { url, events: ['balance.low'] } });
  expect(created.response.status).toBe(201);
  return new URL(url).pathname;
}

/** The balance.low events delivered to `path` so far, in order of arrival. */
function deliveredTo(path: string): BalanceLow[] {
  return receiver.requests
    .filter((request) => request.path === path)
    .map((request) => parseJson<BalanceLow>(request.rawBody));
}

/** Waits until `count` balance.low events reached `path`; returns them. */
async function awaitDeliveries(path: string, count: number): Promise<BalanceLow[]> {
  await waitFor(`${count} balance.low deliveries to ${path}`, () => deliveredTo(path).length >= count);
  return deliveredTo(path);
}

/** The org's balance.low events as GET /events lists them, oldest first. */
async function listed(on: TestApp, org: TestOrg): Promise<BalanceLow[]> {
  const answered = await on.client(org.key).GET('/events', { params: { query: { kind: 'balance.low', limit: 100 } } });
  expect(answered.response.status).toBe(200);
  return (answered.data!.data as BalanceLow[]).reverse();
}

/** Places a call for `org` to a number that completes; returns its id, or the error code. */
async function place(on: TestApp, org: TestOrg): Promise<{ id?: string; code?: string }> {
  const answered = await on
    .client(org.key)
    .POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('0000') } });
  return { id: answered.data?.data.id, code: answered.error?.error.code };
}

/** Places a call that must be accepted; returns its id. */
async function placed(org: TestOrg): Promise<string> {
  const { id, code } = await place(app, org);
  expect(code).toBeUndefined();
  return id!;
}

async function cancel(org: TestOrg, id: string): Promise<void> {
  const answered = await app.client(org.key).POST('/calls/{id}/cancel', { params: { path: { id } } });
  expect(answered.response.status).toBe(200);
}

async function orgRow(orgId: string) {
  return database.db
    .selectFrom('orgs')
    .select(['balance_paise', 'held_paise', 'low_balance_threshold_paise'])
    .where('id', '=', orgId)
    .executeTakeFirstOrThrow();
}

const dataOf = (events: BalanceLow[]) => events.map((event) => [event.livemode, event.data]);

describe('balance.low', () => {
  it('is sent once when calls take the balance below the threshold, and again only after a top-up', async () => {
    const org = await createTestOrg(database.db, { credits: 5 * HOLD + DEFAULT_LOW_BALANCE_THRESHOLD_PAISE / 2 });
    expect((await orgRow(org.orgId)).low_balance_threshold_paise).toBe(DEFAULT_LOW_BALANCE_THRESHOLD_PAISE);
    const path = await subscribe(app, org, 'crossings');

    // 15,000 → 13,000 → 11,000, still at or above 10,000; → 9,000 falls below.
    const calls = [await placed(org), await placed(org)];
    expect(await listed(app, org)).toEqual([]);
    calls.push(await placed(org));
    const first = { balance_paise: 9_000, threshold_paise: 10_000, held_paise: 3 * HOLD };
    expect(dataOf(await awaitDeliveries(path, 1))).toEqual([[true, first]]);

    // Below, nothing more: further holds, and a hold given back that leaves the balance below.
    calls.push(await placed(org), await placed(org));
    await cancel(org, calls.pop()!);
    calls.push(await placed(org));
    expect(await orgRow(org.orgId)).toMatchObject({ balance_paise: 5_000, held_paise: 5 * HOLD });
    expect(dataOf(await listed(app, org))).toEqual([[true, first]]);

    // A top-up to the threshold re-arms it; the next fall sends one more.
    expect(await addCredits(database.db, org.orgId, 5_000)).toBe(10_000);
    calls.push(await placed(org));
    const second = { balance_paise: 8_000, threshold_paise: 10_000, held_paise: 6 * HOLD };
    expect(dataOf(await awaitDeliveries(path, 2))).toEqual([
      [true, first],
      [true, second],
    ]);
    expect(dataOf(await listed(app, org))).toEqual([
      [true, first],
      [true, second],
    ]);

    // Every hold given back: the balance is whole again and nothing is held.
    for (const id of calls) await cancel(org, id);
    expect(await orgRow(org.orgId)).toMatchObject({ balance_paise: 20_000, held_paise: 0 });
    expect(await listed(app, org)).toHaveLength(2);

    // The delivery log shows them like any other kind.
    const [endpoint] = (await app.client(org.key).GET('/webhooks')).data!.data;
    const log = await app.client(org.key).GET('/webhooks/{id}/deliveries', { params: { path: { id: endpoint!.id } } });
    expect(log.response.status).toBe(200);
    expect(log.data!.data.map((delivery) => delivery.event)).toEqual(['balance.low', 'balance.low']);
  });

  it('is sent exactly once when twenty placements race across the threshold', async () => {
    // 30,000 paise: fifteen holds fit; the eleventh takes the balance from 10,000 to 8,000.
    const org = await createTestOrg(database.db, { credits: 30_000, planId: 'scale' });
    const path = await subscribe(app, org, 'race');
    const answers = await Promise.all(Array.from({ length: 20 }, () => place(app, org)));
    expect(answers.filter((answer) => answer.id).length).toBe(15);
    expect(answers.filter((answer) => answer.code === 'insufficient_credits').length).toBe(5);

    const expected = [[true, { balance_paise: 8_000, threshold_paise: 10_000, held_paise: 11 * HOLD }]];
    expect(dataOf(await awaitDeliveries(path, 1))).toEqual(expected);
    expect(dataOf(await listed(app, org))).toEqual(expected);
    expect(await orgRow(org.orgId)).toMatchObject({ balance_paise: 0, held_paise: 15 * HOLD });
    for (const answer of answers) if (answer.id) await cancel(org, answer.id);
  });

  it('is never sent with the threshold at 0', async () => {
    const org = await createTestOrg(database.db, { credits: 12_000 });
    const result = await runAdmin(database.url, ['org', 'update', '--org', org.orgId, '--low-balance-threshold', '0']);
    expect(result.code, result.stderr).toBe(0);
    await subscribe(app, org, 'off');
    const calls = [];
    for (let i = 0; i < 6; i += 1) calls.push(await placed(org));
    expect(await orgRow(org.orgId)).toMatchObject({ balance_paise: 0, low_balance_threshold_paise: 0 });
    for (const id of calls) await cancel(org, id);
    expect(await listed(app, org)).toEqual([]);
  });

  it('in test mode is sent from the test balance with livemode false, never to the live endpoint', async () => {
    const live = await createTestOrg(database.db, { credits: 11_000 });
    const { key } = await issueApiKey(database.db, live.orgId, { mode: 'test' });
    const test: TestOrg = { orgId: await orgForMode(database.db, live.orgId, 'test'), agentId: live.agentId, key };
    const livePath = await subscribe(app, live, 'live');
    const testPath = await subscribe(app, test, 'test');

    // The twin follows the live org's threshold.
    const set = await runAdmin(database.url, [
      'org',
      'update',
      '--org',
      live.orgId,
      '--low-balance-threshold',
      '20000',
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect((await orgRow(test.orgId)).low_balance_threshold_paise).toBe(20_000);

    // A reset to 21,000 is a rise; the test call's hold is the fall.
    await resetTestCredits(database.db, live.orgId, 21_000);
    const call = await placed(test);
    const fromCall = { balance_paise: 19_000, threshold_paise: 20_000, held_paise: HOLD };
    expect(dataOf(await awaitDeliveries(testPath, 1))).toEqual([[false, fromCall]]);

    // A reset is a movement like any other: up re-arms, down below the threshold sends one.
    await resetTestCredits(database.db, live.orgId, 50_000);
    const reset = await runAdmin(database.url, [
      'credits',
      'reset',
      '--org',
      live.orgId,
      '--mode',
      'test',
      '--paise',
      '500',
    ]);
    expect(reset.code, reset.stderr).toBe(0);
    const fromReset = { balance_paise: 500, threshold_paise: 20_000, held_paise: HOLD };
    expect(dataOf(await awaitDeliveries(testPath, 2))).toEqual([
      [false, fromCall],
      [false, fromReset],
    ]);
    expect(dataOf(await listed(app, test))).toEqual([
      [false, fromCall],
      [false, fromReset],
    ]);
    await cancel(test, call);

    // Live mode saw none of it: its balance never moved, and it opened below the new threshold.
    expect(await orgRow(live.orgId)).toMatchObject({ balance_paise: 11_000, held_paise: 0 });
    expect(await listed(app, live)).toEqual([]);
    expect(deliveredTo(livePath)).toEqual([]);
  });
});

describe("a call's settlement", () => {
  let fastDatabase: TestDatabase;
  let fast: TestApp;

  beforeAll(async () => {
    fastDatabase = await createTestDatabase();
    fast = await startTestApp(fastDatabase, {
      config: { webhookPrivateAllowlist: ['127.0.0.0/8'], webhookCaCerts: [(await testTls()).caCert] },
    });
  });

  afterAll(async () => {
    await fast?.close();
    await fastDatabase?.drop();
  });

  it('is one movement: giving the hold back and taking the charge never counts as a rise and a fall', async () => {
    // A minute's cap at 12,000 paise a minute holds 12,000; the simulator's completed calls last at
    // least 20 s, so the charge is at least 4,000 and the balance ends below the threshold again.
    const org = await createTestOrg(fastDatabase.db, {
      credits: 12_000,
      agent: { maxDurationSec: 60, ratePaisePerMinute: 12_000 },
    });
    const path = await subscribe(fast, org, 'settled');
    const { id } = await place(fast, org);
    expect(dataOf(await awaitDeliveries(path, 1))).toEqual([
      [true, { balance_paise: 0, threshold_paise: 10_000, held_paise: 12_000 }],
    ]);
    const ended = await waitForCall(fastDatabase.db, fast.client(org.key), id!, 'completed');
    expect(ended.credits_debited_paise).toBeGreaterThanOrEqual(4_000);
    const row = await fastDatabase.db
      .selectFrom('orgs')
      .select(['balance_paise', 'held_paise'])
      .where('id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ balance_paise: 12_000 - ended.credits_debited_paise, held_paise: 0 });
    expect(await listed(fast, org)).toHaveLength(1);
  });
});

describe('admin org update --low-balance-threshold', () => {
  it('sets the threshold of the org and its test twin, and refuses bad values with exit status 2', async () => {
    const org = await createTestOrg(database.db);
    const twin = await orgForMode(database.db, org.orgId, 'test');
    const update = (...flags: string[]) => runAdmin(database.url, ['org', 'update', '--org', org.orgId, ...flags]);

    const done = await update('--low-balance-threshold', '25000', '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(parseJson<unknown>(done.stdout)).toEqual({ id: org.orgId, low_balance_threshold_paise: 25_000 });
    expect((await orgRow(org.orgId)).low_balance_threshold_paise).toBe(25_000);
    expect((await orgRow(twin)).low_balance_threshold_paise).toBe(25_000);
    const list = await runAdmin(database.url, ['org', 'list', '--json']);
    const mine = parseJson<Array<{ id: string; low_balance_threshold_paise: number }>>(list.stdout).find(
      (row) => row.id === org.orgId,
    );
    expect(mine?.low_balance_threshold_paise).toBe(25_000);

    for (const bad of ['-1', '1.5', 'ten', '', '9007199254740992']) {
      const refused = await update(`--low-balance-threshold=${bad}`);
      expect(refused.code, `${bad}: ${refused.stderr}`).toBe(2);
      expect(refused.stderr).toContain('--low-balance-threshold must be a whole number of paise from 0 (off)');
    }
    const nothing = await update();
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('nothing to change');
    const unknown = await runAdmin(database.url, [
      'org',
      'update',
      '--org',
      '00000000-0000-4000-8000-000000000000',
      '--low-balance-threshold',
      '5',
    ]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no org with id');
    expect((await orgRow(org.orgId)).low_balance_threshold_paise).toBe(25_000);
  });
});
