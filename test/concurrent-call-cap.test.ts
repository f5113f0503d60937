// The plan's cap on calls in progress, through real HTTP and PostgreSQL with the simulator slowed so
// placed calls stay in progress: POST /calls at the cap answers 429 too_many_requests with Retry-After
// and writes nothing, a call that ends frees its slot, parallel placements never pass the cap, plans
// without a cap are unchanged, each mode counts its own calls, and the CLI sets and lists the cap.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import type { ErrorResponse } from './support/json.js';
import { parseJson } from './support/json.js';
import { countCallRows, testNumber } from './support/calls.js';
import { runAdmin } from './support/cli.js';
import { HANG_GUARD_MS } from './support/hang-guard.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';
import { createPlan, updatePlan } from '../src/orgs/service.js';
import { issueApiKey } from '../src/orgs/api-keys.js';
import { CONCURRENCY_RETRY_AFTER_S } from '../src/calls/policy.js';

let database: TestDatabase;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  // Ten minutes a simulated step: a placed call stays queued for the whole file unless canceled.
  app = await startTestApp(database, { config: { simulatorStepMs: 600_000 } });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

type Placed = { data: { id: string } } & ErrorResponse;

/** POST /calls for the org's agent to a long-talking test number, with `key` (the org's own by default). */
function place(org: TestOrg, options: { key?: string; idempotencyKey?: string } = {}) {
  return rawRequest<Placed>(app, 'POST', '/calls', {
    headers: {
      Authorization: `Bearer ${options.key ?? org.key}`,
      'Content-Type': 'application/json',
      ...(options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {}),
    },
    body: JSON.stringify({ agent_id: org.agentId, to_e164: testNumber('7777') }),
  });
}

function cancel(org: TestOrg, id: string) {
  return rawRequest(app, 'POST', `/calls/${id}/cancel`, { headers: { Authorization: `Bearer ${org.key}` } });
}

let plans = 0;
/** A new plan with this cap (null: none) and an org on it. */
async function orgWithCap(cap: number | null, options: { credits?: number } = {}): Promise<TestOrg> {
  plans += 1;
  const plan = await createPlan(database.db, {
    id: `capped-${plans}`,
    name: `Capped ${plans}`,
    rateLimitPerMinute: 10_000,
    maxConcurrentCalls: cap,
  });
  return createTestOrg(database.db, { planId: plan.id, ...options });
}

async function placementsOf(orgId: string): Promise<number> {
  const rows = await database.db.selectFrom('call_placements').select('id').where('org_id', '=', orgId).execute();
  return rows.length;
}

function expectAtCap(answer: { status: number; headers: Headers; body: Placed }, cap: number) {
  expect(answer.status).toBe(429);
  expect(answer.body.error.code).toBe('too_many_requests');
  expect(answer.body.error.message).toBe(
    cap === 1
      ? "The organisation's plan allows at most 1 call in progress at once, and 1 is in progress; retry in 5 seconds, once one has ended."
      : `The organisation's plan allows at most ${cap} calls in progress at once, and ${cap} are in progress; retry in 5 seconds, once one has ended.`,
  );
  expect(answer.headers.get('retry-after')).toBe(String(CONCURRENCY_RETRY_AFTER_S));
  expect(answer.headers.get('x-ratelimit-limit')).toBe('10000');
}

describe('POST /calls under a concurrency cap', () => {
  it('accepts calls up to the cap, refuses the next with 429 writing nothing, and accepts again once one ends', async () => {
    const org = await orgWithCap(2);
    const first = await place(org);
    const second = await place(org);
    expect([first.status, second.status]).toEqual([201, 201]);
    const before = await balanceAndLedgerSum(database.db, org.orgId);
    const ledgerRows = await database.db
      .selectFrom('credit_ledger')
      .select('id')
      .where('org_id', '=', org.orgId)
      .execute();

    const refused = await place(org, { idempotencyKey: 'cap-retry-1' });
    expectAtCap(refused, 2);
    // Nothing was written: no call, placement, hold, ledger row or Idempotency-Key.
    expect(await countCallRows(database.db, org.orgId)).toBe(2);
    expect(await placementsOf(org.orgId)).toBe(0);
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual(before);
    const ledgerAfter = await database.db
      .selectFrom('credit_ledger')
      .select('id')
      .where('org_id', '=', org.orgId)
      .execute();
    expect(ledgerAfter).toHaveLength(ledgerRows.length);
    const keys = await database.db
      .selectFrom('call_idempotency_keys')
      .select('key')
      .where('org_id', '=', org.orgId)
      .execute();
    expect(keys).toEqual([]);

    // A canceled call has ended: its slot is free, and the refused key places a call now.
    expect((await cancel(org, first.body.data.id)).status).toBe(200);
    const retried = await place(org, { idempotencyKey: 'cap-retry-1' });
    expect(retried.status).toBe(201);
    expectAtCap(await place(org), 2);
  });

  it('lets exactly the cap through when 12 placements arrive at once', async () => {
    const org = await orgWithCap(3);
    const answers = await Promise.all(Array.from({ length: 12 }, () => place(org)));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array<number>(3).fill(201), ...Array<number>(9).fill(429)]);
    for (const answer of answers.filter((one) => one.status === 429)) {
      expect(answer.body.error.code).toBe('too_many_requests');
      expect(answer.headers.get('retry-after')).toBe('5');
    }
    expect(await countCallRows(database.db, org.orgId)).toBe(3);
    expect(await placementsOf(org.orgId)).toBe(0);
  });

  it('leaves orgs on a plan without a cap unchanged, the starter plan included', async () => {
    const uncapped = await orgWithCap(null);
    const starter = await createTestOrg(database.db);
    for (const org of [uncapped, starter]) {
      const answers = await Promise.all(Array.from({ length: 6 }, () => place(org)));
      expect(answers.map((answer) => answer.status)).toEqual(Array<number>(6).fill(201));
    }
    const builtIn = await database.db
      .selectFrom('plans')
      .select(['id', 'max_concurrent_calls'])
      .orderBy('id')
      .execute();
    expect(builtIn.filter((plan) => ['scale', 'starter'].includes(plan.id))).toEqual([
      { id: 'scale', max_concurrent_calls: null },
      { id: 'starter', max_concurrent_calls: null },
    ]);
  });

  it('applies a changed cap at the next placement', async () => {
    const org = await orgWithCap(1);
    expect((await place(org)).status).toBe(201);
    expectAtCap(await place(org), 1);
    const plan = await database.db
      .selectFrom('orgs')
      .select('plan_id')
      .where('id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    await updatePlan(database.db, plan.plan_id!, { maxConcurrentCalls: null });
    expect((await place(org)).status).toBe(201);
    await updatePlan(database.db, plan.plan_id!, { maxConcurrentCalls: 2 });
    expectAtCap(await place(org), 2);
  });

  it('counts test-mode calls apart from live calls, each mode against the same cap', async () => {
    const org = await orgWithCap(1);
    const { key: testKey } = await issueApiKey(database.db, org.orgId, { mode: 'test' });
    expect((await place(org)).status).toBe(201);
    expectAtCap(await place(org), 1);
    // The live call does not use up the test mode's slot, nor the test call the live one's.
    const testCall = await place(org, { key: testKey });
    expect(testCall.status).toBe(201);
    expectAtCap(await place(org, { key: testKey }), 1);
  });
});

describe('the cap through the operator CLI', () => {
  const admin = (...args: string[]) => runAdmin(database.url, args);

  it(
    'creates, updates and lists a plan with --max-concurrent-calls, and refuses bad values with exit 2',
    { timeout: HANG_GUARD_MS },
    async () => {
      const created = await admin(
        'plan',
        'create',
        '--id',
        'dialer',
        '--name',
        'Dialer',
        '--rate-limit',
        '600',
        '--max-concurrent-calls',
        '25',
        '--json',
      );
      expect(created.code, created.stderr).toBe(0);
      expect(parseJson(created.stdout)).toEqual({
        id: 'dialer',
        name: 'Dialer',
        rate_limit_per_minute: 600,
        max_concurrent_calls: 25,
        active: true,
      });
      const human = await admin('plan', 'list');
      expect(human.stdout).toMatch(/^ID +NAME +REQUESTS\/MIN +MAX CALLS +ACTIVE +ORGS$/m);
      expect(human.stdout).toMatch(/^dialer +Dialer +600 +25 +yes +0$/m);
      expect(human.stdout).toMatch(/^starter +Starter +120 +none +yes +\d+$/m);

      const raised = await admin('plan', 'update', '--id', 'dialer', '--max-concurrent-calls', '40');
      expect(raised.code, raised.stderr).toBe(0);
      expect(raised.stdout).toContain('40 calls at once');
      const removed = await admin('plan', 'update', '--id', 'dialer', '--max-concurrent-calls', 'none', '--json');
      expect(removed.code, removed.stderr).toBe(0);
      expect(parseJson(removed.stdout)).toMatchObject({ id: 'dialer', max_concurrent_calls: null });
      const listed = parseJson<Array<{ id: string; max_concurrent_calls: number | null }>>(
        (await admin('plan', 'list', '--json')).stdout,
      );
      expect(listed.find((plan) => plan.id === 'dialer')).toMatchObject({ max_concurrent_calls: null });

      const createMessage = '--max-concurrent-calls must be a whole number of calls from 1 to 2147483647';
      const cases: Array<[string[], string]> = [
        [
          ['plan', 'create', '--id', 'zero', '--name', 'Z', '--rate-limit', '10', '--max-concurrent-calls', '0'],
          createMessage,
        ],
        [
          ['plan', 'create', '--id', 'many', '--name', 'M', '--rate-limit', '10', '--max-concurrent-calls', 'lots'],
          createMessage,
        ],
        [
          ['plan', 'create', '--id', 'none', '--name', 'N', '--rate-limit', '10', '--max-concurrent-calls', 'none'],
          createMessage,
        ],
        [['plan', 'update', '--id', 'dialer', '--max-concurrent-calls=-3'], `${createMessage}, or none for no cap`],
        [
          ['plan', 'update', '--id', 'dialer', '--max-concurrent-calls', '2147483648'],
          `${createMessage}, or none for no cap`,
        ],
      ];
      for (const [args, message] of cases) {
        const result = await admin(...args);
        expect([result.code, result.stderr.trim()], args.join(' ')).toEqual([
          2,
          expect.stringContaining(`Error: ${message} (see`),
        ]);
      }
      const unchanged = await database.db
        .selectFrom('plans')
        .select('max_concurrent_calls')
        .where('id', '=', 'dialer')
        .executeTakeFirstOrThrow();
      expect(unchanged.max_concurrent_calls).toBeNull();
      expect(await database.db.selectFrom('plans').select('id').where('id', 'in', ['zero', 'many']).execute()).toEqual(
        [],
      );
    },
  );
});
