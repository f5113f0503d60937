// The operator CLI as a separate process: orgs, agents, keys, credits, plans, CSV contact import, the
// delivery log, and what every command shares (help, JSON output, exit statuses, no stack traces).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANG_GUARD_MS } from './support/hang-guard.js';
import { blocksAnother, createTestDatabase, type TestDatabase } from './support/database.js';
import { rawRequest, startTestApp, type TestApp } from './support/app.js';
import { runAdmin, type CliResult } from './support/cli.js';
import { parseJson } from './support/json.js';
import { waitFor } from './support/calls.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';
import { OPENING_TEST_BALANCE_PAISE } from '../src/orgs/modes.js';
import { updateWebhookRow } from '../src/webhooks/queries.js';
import { GROUPS } from '../src/cli/admin/commands.js';
import { answer, startReceiver, testTls } from './support/webhook-receiver.js';

let database: TestDatabase;
let app: TestApp;
let dir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  dir = await mkdtemp(path.join(tmpdir(), 'voice-cli-'));
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

const admin = (...args: string[]) => runAdmin(database.url, args);

// Every test here starts the CLI as separate Node processes (through tsx), a dozen or more in a row; on
// a loaded machine one start takes many seconds, so only a hang fails them, never slowness.
const CLI_TESTS = { timeout: HANG_GUARD_MS };

async function newOrg(...extra: string[]): Promise<string> {
  const result = await admin('org', 'create', '--name', 'CLI org', '--json', ...extra);
  expect(result.code, result.stderr).toBe(0);
  return parseJson<Created>(result.stdout).id;
}

/** Creates an API key for `orgId` through the CLI and returns the key. */
async function newKey(orgId: string): Promise<string> {
  return parseJson<CreatedKey>((await admin('key', 'create', '--org', orgId, '--json')).stdout).key;
}

// What the CLI's --json output holds, as far as these tests read it.
interface Created {
  id: string;
}
interface CreatedKey {
  key: string;
  prefix: string;
}
interface LoggedAttempt {
  id: string;
  delivery_id: string;
  attempted_at: string;
  failure_kind: string | null;
  response_excerpt: string | null;
}
interface Replay {
  queued: string[];
  made_due: string[];
  already_pending: string[];
}
interface Retention {
  ran: boolean;
  removed: Record<string, number> | null;
}
interface ImportJson {
  rows: number;
  created: number;
  updated: number;
  rejected: number;
  rejections: Array<{
    line: number;
    error: { code: string; message: string; param: string; details: Record<string, string[]> };
  }>;
}

/** Runs `run` on every item, a few CLI processes at a time (each start costs a second or two of CPU). */
async function inParallel<T>(items: T[], run: (item: T) => Promise<void>, width = 3): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await run(item);
    }),
  );
}

/** Checks a CLI run printed no stack trace on either stream. */
function expectNoStackTrace(result: CliResult, label: string): void {
  expect(result.stdout + result.stderr, label).not.toMatch(/^\s+at /m);
}

/** The X-RateLimit-Limit the API answers `key` with. */
async function rateLimitOf(key: string): Promise<string | null> {
  const response = await rawRequest(app, 'GET', '/contacts', { headers: { Authorization: `Bearer ${key}` } });
  expect(response.status).toBe(200);
  return response.headers.get('X-RateLimit-Limit');
}

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `text` as a regular expression matching it literally. */
function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A DATABASE_URL on a loopback port nothing listens on (it was free a moment ago). */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return `postgres://postgres@127.0.0.1:${port}/none`;
}

describe('operator CLI', CLI_TESTS, () => {
  it('creates an org, an agent and a key that works against the API, then revokes it', async () => {
    const created = await admin(
      'org',
      'create',
      '--name',
      'Acme',
      '--credits',
      '5000',
      '--plan',
      'scale',
      '--from',
      '+918045678901',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    const org = parseJson<Created>(created.stdout);
    expect(org).toMatchObject({ name: 'Acme', plan: 'scale', credits_paise: 5000, from_e164: '+918045678901' });
    expect(await balanceAndLedgerSum(database.db, org.id)).toEqual({ balance: 5000, ledgerSum: 5000 });

    const agent = await admin(
      'agent',
      'create',
      '--org',
      org.id,
      '--name',
      'Priya',
      '--language',
      'hi-IN',
      '--max-duration',
      '300',
      '--json',
    );
    expect(agent.code, agent.stderr).toBe(0);
    expect(JSON.parse(agent.stdout)).toMatchObject({
      org_id: org.id,
      name: 'Priya',
      language: 'hi-IN',
      max_duration_sec: 300,
    });

    const key = await admin('key', 'create', '--org', org.id, '--json');
    expect(key.code, key.stderr).toBe(0);
    const { key: apiKey, prefix } = parseJson<CreatedKey>(key.stdout);
    expect(apiKey).toMatch(/^svc_live_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
    const stored = await database.db
      .selectFrom('api_keys')
      .select('secret_hash')
      .where('prefix', '=', prefix)
      .executeTakeFirstOrThrow();
    expect(stored.secret_hash).not.toContain(apiKey.slice(-32));

    const listed = await admin('key', 'list', '--org', org.id);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(apiKey);
    const [header, row] = listed.stdout.trim().split('\n');
    expect(header!.split(/\s{2,}/)).toEqual(['KEY', 'MODE', 'STATE', 'CREATED', 'BY', 'LAST USED', 'LABEL']);
    expect(row!.split(/\s{2,}/)).toEqual([
      `svc_live_${prefix}_${'*'.repeat(32)}`,
      'live',
      'active',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      'cli',
      'never',
    ]);
    const listedJson = await admin('key', 'list', '--org', org.id, '--json');
    expect(listedJson.code, listedJson.stderr).toBe(0);
    expect(JSON.parse(listedJson.stdout)).toEqual([
      {
        prefix,
        mode: 'live',
        masked: `svc_live_${prefix}_${'*'.repeat(32)}`,
        label: null,
        created_at: expect.any(String) as unknown,
        created_by: 'cli',
        last_used_at: null,
        revoked_at: null,
      },
    ]);

    const auth = { headers: { Authorization: `Bearer ${apiKey}` } };
    expect((await rawRequest(app, 'GET', '/contacts', auth)).status).toBe(200);
    // The use is recorded beside the request, not before its answer.
    await waitFor('key list to show the use', async () => {
      const [, used] = (await admin('key', 'list', '--org', org.id)).stdout.trim().split('\n');
      return /^\d{4}-\d\d-\d\dT/.test(used!.split(/\s{2,}/)[5]!);
    });
    // A key written out with the other mode names no key: the live key stays usable.
    const otherMode = await admin('key', 'revoke', `svc_test_${prefix}_${'*'.repeat(32)}`);
    expect([otherMode.code, otherMode.stderr.trim()]).toEqual([1, `Error: no active test key with prefix ${prefix}`]);
    expect((await rawRequest(app, 'GET', '/contacts', auth)).status).toBe(200);
    // The masked key that key list prints names the key as well as its bare prefix does.
    const revoked = await admin('key', 'revoke', `svc_live_${prefix}_${'*'.repeat(32)}`, '--json');
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ prefix, revoked: true });
    expect((await rawRequest(app, 'GET', '/contacts', auth)).status).toBe(401);
    for (const [named, kind] of [
      [prefix, 'key'],
      [`svc_live_${prefix}`, 'live key'],
      [apiKey, 'live key'],
    ]) {
      const again = await admin('key', 'revoke', named!);
      expect([again.code, again.stderr.trim()]).toEqual([1, `Error: no active ${kind} with prefix ${prefix}`]);
    }
  });

  it('adds credits and sets or removes the plan', async () => {
    const orgId = await newOrg('--no-plan');
    const added = await admin('credits', 'add', '--org', orgId, '--paise', '2500', '--json');
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ balance_paise: 2500 });
    expect(await balanceAndLedgerSum(database.db, orgId)).toEqual({ balance: 2500, ledgerSum: 2500 });
    // A top-up past the largest exact balance is refused whole: nothing is added.
    const tooMuch = await admin('credits', 'add', '--org', orgId, '--paise', String(Number.MAX_SAFE_INTEGER - 2000));
    expect([tooMuch.code, tooMuch.stderr]).toEqual([1, expect.stringContaining('the most it can hold')]);
    expect(await balanceAndLedgerSum(database.db, orgId)).toEqual({ balance: 2500, ledgerSum: 2500 });

    expect((await admin('plan', 'set', '--org', orgId, '--plan', 'starter')).code).toBe(0);
    let org = await database.db.selectFrom('orgs').select('plan_id').where('id', '=', orgId).executeTakeFirstOrThrow();
    expect(org.plan_id).toBe('starter');
    const removed = await admin('plan', 'set', '--org', orgId, '--plan', 'none', '--json');
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ org_id: orgId, plan: null });
    org = await database.db.selectFrom('orgs').select('plan_id').where('id', '=', orgId).executeTakeFirstOrThrow();
    expect(org.plan_id).toBeNull();
  });

  it("lists orgs newest first and an org's agents", async () => {
    const older = await newOrg('--credits', '700');
    const newer = await newOrg('--no-plan');
    const agent = await admin('agent', 'create', '--org', newer, '--name', 'Kavya', '--rate', '150', '--json');
    expect(agent.code, agent.stderr).toBe(0);
    const agentId = parseJson<Created>(agent.stdout).id;

    const orgs = await admin('org', 'list', '--json');
    expect(orgs.code, orgs.stderr).toBe(0);
    const rows = JSON.parse(orgs.stdout) as Array<{ id: string; created_at: string }>;
    const ids = rows.map((row) => row.id);
    expect(ids.indexOf(newer)).toBeLessThan(ids.indexOf(older));
    expect(rows.find((row) => row.id === older)).toEqual({
      id: older,
      name: 'CLI org',
      plan: 'starter',
      balance_paise: 700,
      test_balance_paise: OPENING_TEST_BALANCE_PAISE,
      low_balance_threshold_paise: 10_000,
      from_e164: null,
      created_at: expect.any(String) as unknown,
    });
    const times = rows.map((row) => Date.parse(row.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const orgsHuman = await admin('org', 'list');
    expect(orgsHuman.code, orgsHuman.stderr).toBe(0);
    expect(orgsHuman.stdout).toMatch(/^ID +NAME +PLAN +BALANCE \(PAISE\) +TEST BALANCE +LOW BALANCE AT +CREATED$/m);
    expect(orgsHuman.stdout).toMatch(new RegExp(`^${older} +CLI org +starter +700 +1000000 +10000 +\\d{4}-`, 'm'));
    expect(orgsHuman.stdout).toMatch(new RegExp(`^${newer} +CLI org +none +0 +1000000 +10000 `, 'm'));

    const agents = await admin('agent', 'list', '--org', newer, '--json');
    expect(agents.code, agents.stderr).toBe(0);
    expect(JSON.parse(agents.stdout)).toEqual([
      {
        id: agentId,
        org_id: newer,
        name: 'Kavya',
        language: 'en-IN',
        max_duration_sec: 600,
        from_e164: null,
        rate_paise_per_minute: 150,
        provider: 'simulator',
        created_at: expect.any(String) as unknown,
      },
    ]);
    const agentsHuman = await admin('agent', 'list', '--org', newer);
    expect(agentsHuman.stdout).toMatch(new RegExp(`^${agentId} +Kavya +en-IN +600 s +150 paise/min`, 'm'));

    // Values the API could not answer with (Agent.name's maxLength, rate_paise_per_minute's int32) are refused.
    const refusals: Array<[string[], string]> = [
      [['--name', 'n'.repeat(201)], '--name must be 1 to 200 characters'],
      [['--name', '  '], '--name must be 1 to 200 characters'],
      [['--name', 'Big', '--rate', '2147483648'], '--rate must be a whole number of paise per minute from 0 to'],
    ];
    for (const [args, message] of refusals) {
      const refused = await admin('agent', 'create', '--org', newer, ...args);
      expect([refused.code, refused.stderr], args.join(' ')).toEqual([1, expect.stringContaining(message)]);
    }
    const longest = await admin('agent', 'create', '--org', newer, '--name', 'n'.repeat(200), '--json');
    expect(longest.code, longest.stderr).toBe(0);
    const none = await admin('agent', 'list', '--org', older);
    expect([none.code, none.stdout.trim()]).toEqual([0, 'No agents.']);

    // An agent's provider is data: unknown providers are refused, and the update names the agent's new one.
    const unknown = await admin('agent', 'update', '--org', newer, '--agent', agentId, '--provider', 'nope');
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('--provider must be one of simulator')]);
    const moved = await admin(
      'agent',
      'update',
      '--org',
      newer,
      '--agent',
      agentId,
      '--provider',
      'simulator',
      '--json',
    );
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toMatchObject({ id: agentId, provider: 'simulator' });
    const foreign = await admin('agent', 'update', '--org', older, '--agent', agentId, '--provider', 'simulator');
    expect([foreign.code, foreign.stderr]).toEqual([1, expect.stringContaining(agentId)]);
  });

  it('creates, lists, updates and assigns a plan above 1,200 requests per minute, and the API applies it', async () => {
    const created = await admin(
      'plan',
      'create',
      '--id',
      'enterprise',
      '--name',
      'Enterprise',
      '--rate-limit',
      '5000',
      '--json',
    );
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toEqual({
      id: 'enterprise',
      name: 'Enterprise',
      rate_limit_per_minute: 5000,
      max_concurrent_calls: null,
      active: true,
    });

    const orgId = await newOrg('--plan', 'enterprise');
    const secondOrgId = await newOrg('--plan', 'enterprise');
    const key = await newKey(orgId);
    expect(await rateLimitOf(key)).toBe('5000');

    const updated = await admin(
      'plan',
      'update',
      '--id',
      'enterprise',
      '--rate-limit',
      '6000',
      '--name',
      'Enterprise XL',
      '--json',
    );
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toEqual({
      id: 'enterprise',
      name: 'Enterprise XL',
      rate_limit_per_minute: 6000,
      max_concurrent_calls: null,
      active: true,
    });
    expect(await rateLimitOf(key)).toBe('6000');
    // Each org on the plan finds the change in its own audit log, beside the operator's record.
    const entries = await database.db
      .selectFrom('audit_log')
      .select(['org_id', 'action', 'target'])
      .where('action', '=', 'plan.updated')
      .where('target', '=', 'enterprise')
      .execute();
    expect(entries).toEqual(
      expect.arrayContaining([
        { org_id: null, action: 'plan.updated', target: 'enterprise' },
        { org_id: orgId, action: 'plan.updated', target: 'enterprise' },
        { org_id: secondOrgId, action: 'plan.updated', target: 'enterprise' },
      ]),
    );
    expect(entries).toHaveLength(3);

    const listed = await admin('plan', 'list', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        id: 'starter',
        name: 'Starter',
        rate_limit_per_minute: 120,
        max_concurrent_calls: null,
        active: true,
        orgs: expect.any(Number) as unknown,
      },
      {
        id: 'scale',
        name: 'Scale',
        rate_limit_per_minute: 1200,
        max_concurrent_calls: null,
        active: true,
        orgs: expect.any(Number) as unknown,
      },
      {
        id: 'enterprise',
        name: 'Enterprise XL',
        rate_limit_per_minute: 6000,
        max_concurrent_calls: null,
        active: true,
        orgs: 2,
      },
    ]);
    const human = await admin('plan', 'list');
    expect(human.stdout).toMatch(/^enterprise +Enterprise XL +6000 +none +yes +2$/m);

    // Switched off: its orgs fall back to the default limit, and no org can be put on it.
    const off = await admin('plan', 'update', '--id', 'enterprise', '--active', 'false');
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain('switched off');
    expect(await rateLimitOf(key)).toBe('120');
    const other = await newOrg('--no-plan');
    const refused = await admin('plan', 'set', '--org', other, '--plan', 'enterprise');
    expect([refused.code, refused.stderr.trim()]).toEqual([1, 'Error: plan "enterprise" is switched off']);
    expect((await admin('plan', 'update', '--id', 'enterprise', '--active', 'true')).code).toBe(0);
    expect(await rateLimitOf(key)).toBe('6000');

    expect((await admin('plan', 'set', '--org', orgId, '--plan', 'none')).code).toBe(0);
    expect(await rateLimitOf(key)).toBe('120');
    const set = await admin('plan', 'set', '--org', orgId, '--plan', 'enterprise', '--json');
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ org_id: orgId, plan: 'enterprise' });
    expect(await rateLimitOf(key)).toBe('6000');

    const cases: Array<[string[], number, string]> = [
      [['plan', 'create', '--id', 'enterprise', '--name', 'Again', '--rate-limit', '10'], 1, 'exists already'],
      [['plan', 'create', '--id', 'Big Plan', '--name', 'Big', '--rate-limit', '10'], 1, '--id must be'],
      [['plan', 'create', '--id', 'none', '--name', 'None', '--rate-limit', '10'], 1, '--id must be'],
      [['plan', 'create', '--id', 'zero', '--name', 'Zero', '--rate-limit', '0'], 1, '--rate-limit must be'],
      [['plan', 'create', '--id', 'blank', '--name', ' ', '--rate-limit', '10'], 1, '--name must be'],
      [['plan', 'update', '--id', 'enterprise', '--rate-limit=-5'], 1, '--rate-limit must be'],
      [['plan', 'update', '--id', 'gold', '--rate-limit', '10'], 1, 'no plan with id gold'],
    ];
    await inParallel(cases, async ([args, code, message]) => {
      const result = await admin(...args);
      expect(result.code, args.join(' ')).toBe(code);
      expect(result.stderr, args.join(' ')).toContain(message);
    });
  });

  it('writes the whole of an output larger than a pipe holds before it exits', async () => {
    const many = await createTestDatabase();
    try {
      await sql`INSERT INTO orgs (name) SELECT 'Org ' || n FROM generate_series(1, 1000) AS n`.execute(many.db);
      const listed = await runAdmin(many.url, ['org', 'list', '--json']);
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout.length).toBeGreaterThan(128 * 1024);
      expect(JSON.parse(listed.stdout)).toHaveLength(1000);
    } finally {
      await many.drop();
    }
  });

  it('rejects bad arguments with a message and a non-zero status', async () => {
    const cases: Array<[string[], number, string]> = [
      [['org', 'create'], 2, '--name is required'],
      [['org', 'create', '--name', 'X', '--credits', 'lots'], 2, '--credits must be a whole number'],
      [['org', 'create', '--name', 'X', '--plan', 'gold'], 1, 'unknown plan "gold"'],
      [['org', 'create', '--name', 'X', '--plan', 'scale', '--no-plan'], 2, 'either --plan or --no-plan'],
      [['agent', 'create', '--org', 'not-a-uuid', '--name', 'A'], 2, '--org must be an org id'],
      [['agent', 'create', '--org', '00000000-0000-4000-8000-000000000000', '--name', 'A'], 1, 'no org with id'],
      [['credits', 'add', '--org', '00000000-0000-4000-8000-000000000000', '--paise', '0'], 1, 'positive whole number'],
      [['frobnicate'], 2, 'Unknown command'],
      [['org', 'create', '--name', 'X', '--colour', 'red'], 2, "Unknown option '--colour'"],
    ];
    for (const [args, code, message] of cases) {
      const result = await admin(...args);
      expect(result.code, args.join(' ')).toBe(code);
      expect(result.stderr, args.join(' ')).toContain(message);
    }
  });
});

describe('every command', CLI_TESTS, () => {
  const COMMANDS = GROUPS.flatMap((group) => group.commands.map((command) => command.name));

  it('has the documented commands', () => {
    expect(COMMANDS).toEqual([
      'org create',
      'org list',
      'org update',
      'agent create',
      'agent list',
      'agent update',
      'key create',
      'key list',
      'key revoke',
      'user invite',
      'user list',
      'user role',
      'user remove',
      'user reset',
      'plan create',
      'plan list',
      'plan update',
      'plan set',
      'credits add',
      'credits reset',
      'contacts import',
      'webhook list',
      'webhook disable',
      'webhook enable',
      'deliveries',
      'redeliver',
      'replay',
      'retention run',
    ]);
  });

  it('prints its usage on stdout for --help and -h, without touching the database', async () => {
    const closed = await closedPortUrl();
    const groups = GROUPS.filter((group) => group.commands.length > 1 || group.commands[0]!.name !== group.name);
    const cases: Array<{ args: string[]; shows: string }> = [
      { args: [], shows: 'Usage: voice-call-api admin <command>' },
      { args: ['--help'], shows: 'Usage: voice-call-api admin <command>' },
      { args: ['-h'], shows: 'Usage: voice-call-api admin <command>' },
      ...groups.map((group) => ({
        args: [group.name, '--help'],
        shows: `Usage: voice-call-api admin ${group.name} <command>`,
      })),
      ...COMMANDS.map((name) => ({
        args: [...name.split(' '), '--help'],
        shows: `Usage: voice-call-api admin ${name} `,
      })),
      { args: ['plan', 'update', '--id', 'x', '-h'], shows: 'Usage: voice-call-api admin plan update ' },
      { args: ['key', 'revoke', '--json', '--help'], shows: 'Usage: voice-call-api admin key revoke ' },
    ];
    const top: string[] = [];
    await inParallel(cases, async ({ args, shows }) => {
      const label = args.join(' ') || '(no arguments)';
      const result = await runAdmin(closed, args);
      expect(result.code, label).toBe(0);
      expect(result.stdout, label).toContain(shows);
      expect(result.stderr, label).toBe('');
      expect(result.stdout, label).not.toContain('Error');
      expectNoStackTrace(result, label);
      if (args[0] === '--help') top.push(result.stdout);
    });
    for (const name of COMMANDS) expect(top[0]).toContain(`  ${name} `);
  });

  it('exits 2 on a bad command line and 1 on an unknown id or an unreachable database, in one line', async () => {
    const closed = await closedPortUrl();
    // A case with json runs with --json, where the failure is one JSON line on stderr.
    const cases: Array<{ args: string[]; code: number; message: string; url?: string; json?: boolean }> = [
      { args: ['frobnicate', '--help'], code: 2, message: 'Unknown command: frobnicate' },
      { args: ['org'], code: 2, message: 'org needs a command: create, list' },
      { args: ['org', 'list', '--colour'], code: 2, message: "Unknown option '--colour'", json: true },
      { args: ['plan', 'delete', '--id', 'scale'], code: 2, message: 'Unknown command: plan delete' },
      { args: ['org', 'list', 'everything'], code: 2, message: 'org list takes no arguments' },
      { args: ['agent', 'list'], code: 2, message: '--org is required' },
      { args: ['agent', 'list', '--org', 'acme'], code: 2, message: '--org must be an org id' },
      { args: ['key', 'revoke'], code: 2, message: 'key revoke takes exactly one PREFIX' },
      { args: ['redeliver', 'nope'], code: 2, message: 'DELIVERY_ID must be a delivery id (a UUID)' },
      { args: ['webhook', 'disable', 'nope'], code: 2, message: 'WEBHOOK_ID must be a webhook id (a UUID)' },
      { args: ['plan', 'create', '--id', 'x', '--name', 'X'], code: 2, message: '--rate-limit is required' },
      {
        args: ['plan', 'create', '--id', 'x', '--name', 'X', '--rate-limit', 'lots'],
        code: 2,
        message: 'whole number',
        json: true,
      },
      {
        args: ['plan', 'update', '--id', 'scale'],
        code: 2,
        message: 'plan update needs --name, --rate-limit, --max-concurrent-calls or --active',
      },
      {
        args: ['plan', 'update', '--id', 'scale', '--active', 'maybe'],
        code: 2,
        message: '--active must be true or false',
      },
      { args: ['plan', 'set', '--org', UNKNOWN_ID], code: 2, message: '--plan is required' },
      {
        args: ['deliveries', '--webhook', UNKNOWN_ID, '--limit', '0'],
        code: 2,
        message: '--limit must be from 1 to 100',
      },
      { args: ['agent', 'list', '--org', UNKNOWN_ID], code: 1, message: `no org with id ${UNKNOWN_ID}` },
      { args: ['key', 'list', '--org', UNKNOWN_ID], code: 1, message: `no org with id ${UNKNOWN_ID}`, json: true },
      { args: ['key', 'create', '--org', UNKNOWN_ID], code: 1, message: `no org with id ${UNKNOWN_ID}` },
      { args: ['key', 'revoke', 'zzzzzzzz'], code: 1, message: 'no active key with prefix zzzzzzzz' },
      {
        args: ['plan', 'set', '--org', UNKNOWN_ID, '--plan', 'scale'],
        code: 1,
        message: `no org with id ${UNKNOWN_ID}`,
      },
      { args: ['plan', 'set', '--org', UNKNOWN_ID, '--plan', 'gold'], code: 1, message: 'unknown plan "gold"' },
      { args: ['plan', 'update', '--id', 'gold', '--active', 'false'], code: 1, message: 'no plan with id gold' },
      { args: ['contacts', 'import', '--org', UNKNOWN_ID, 'x.csv'], code: 1, message: `no org with id ${UNKNOWN_ID}` },
      {
        args: ['deliveries', '--webhook', UNKNOWN_ID],
        code: 1,
        message: `no webhook with id ${UNKNOWN_ID}`,
        json: true,
      },
      { args: ['org', 'list'], code: 1, message: 'cannot reach the database', url: closed },
      {
        args: ['plan', 'set', '--org', UNKNOWN_ID, '--plan', 'scale'],
        code: 1,
        message: 'cannot reach the database',
        url: closed,
        json: true,
      },
    ];
    await inParallel(cases, async ({ args, code, message, url, json }) => {
      const label = `${args.join(' ')}${json ? ' --json' : ''}`;
      const result = await runAdmin(url ?? database.url, json ? [...args, '--json'] : args);
      expect(result.code, label).toBe(code);
      expect(result.stdout, label).toBe('');
      expect(result.stderr.endsWith('\n') && result.stderr.split('\n').length, label).toBe(2);
      if (json)
        expect(JSON.parse(result.stderr), label).toEqual({ error: expect.stringContaining(message) as unknown });
      else expect(result.stderr, label).toMatch(new RegExp(`^Error: .*${escape(message)}`));
      expectNoStackTrace(result, label);
    });
  });
});

describe('delivery log', CLI_TESTS, () => {
  it("prints an endpoint's attempts newest first", async () => {
    const logged = await startTestApp(database, {
      workers: false,
      config: { webhookPrivateAllowlist: ['127.0.0.0/8'] },
    });
    try {
      const orgId = await newOrg('--plan', 'scale');
      const key = await newKey(orgId);
      const client = logged.client(key);
      // Port 4 has no listener here, so each test delivery fails with a refused connection.
      const created = await client.POST('/webhooks', {
        body: { url: 'https://127.0.0.1:4/hook', events: ['contact.created'] },
      });
      expect(created.response.status).toBe(201);
      const webhookId = created.data!.data.id;
      for (let i = 0; i < 2; i += 1) {
        const tested = await client.POST('/webhooks/{id}/test', { params: { path: { id: webhookId } } });
        expect(tested.response.status).toBe(200);
      }
      const result = await admin('deliveries', '--webhook', webhookId, '--json');
      expect(result.code, result.stderr).toBe(0);
      const rows = parseJson<LoggedAttempt[]>(result.stdout);
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({ event: 'webhook.test', attempt: 1, status_code: null });
      expect(rows[0]!.failure_kind).toBeTruthy();
      expect(Date.parse(rows[0]!.attempted_at)).toBeGreaterThanOrEqual(Date.parse(rows[1]!.attempted_at));
      expect(rows[0]!.id).toMatch(UUID);
      expect(rows[0]!.delivery_id).toMatch(UUID);
      const human = await admin('deliveries', '--webhook', webhookId);
      expect(human.stdout).toContain('webhook.test');
      // Every attempt here failed (nothing listens on port 4).
      expect(
        JSON.parse((await admin('deliveries', '--webhook', webhookId, '--status', 'failed', '--json')).stdout),
      ).toHaveLength(2);
      expect(
        JSON.parse((await admin('deliveries', '--webhook', webhookId, '--status', 'succeeded', '--json')).stdout),
      ).toEqual([]);
      expect((await admin('deliveries', '--webhook', webhookId, '--status', 'maybe')).code).toBe(2);
      for (const row of rows) expect(human.stdout).toContain(`attempt ${row.id}  delivery ${row.delivery_id}`);
      expect((await admin('deliveries', '--webhook', '00000000-0000-4000-8000-000000000000')).code).toBe(1);
      expect((await admin('deliveries')).code).toBe(2);
    } finally {
      await logged.close();
    }
  });

  it('prints the ids the receiver and the API know: the attempt (x-svc-delivery) and its delivery', async () => {
    const tls = await testTls();
    const logged = await startTestApp(database, {
      workers: false,
      config: { webhookPrivateAllowlist: ['127.0.0.0/8'], webhookCaCerts: [tls.caCert] },
    });
    const target = await startReceiver();
    try {
      const orgId = await newOrg('--plan', 'scale');
      const key = await newKey(orgId);
      const client = logged.client(key);
      const created = await client.POST('/webhooks', { body: { url: target.url, events: ['contact.created'] } });
      const webhookId = created.data!.data.id;
      const tested = await client.POST('/webhooks/{id}/test', { params: { path: { id: webhookId } } });
      expect(tested.response.status).toBe(200);
      const [received] = await target.waitFor(1);
      const { data: deliveries } = await client.GET('/webhooks/{id}/deliveries', {
        params: { path: { id: webhookId } },
      });
      const delivery = deliveries!.data[0]!;

      const result = await admin('deliveries', '--webhook', webhookId, '--json');
      expect(result.code, result.stderr).toBe(0);
      const [row] = parseJson<LoggedAttempt[]>(result.stdout);
      expect(row).toMatchObject({
        id: received!.headers['x-svc-delivery'],
        delivery_id: delivery.id,
        event_id: delivery.event_id,
        status_code: 200,
      });
      expect(row!.id).toBe(delivery.attempts[0]!.id);
      const human = await admin('deliveries', '--webhook', webhookId);
      expect(human.stdout).toContain(`attempt ${row!.id}  delivery ${delivery.id}`);
    } finally {
      await target.close();
      await logged.close();
    }
  });
  it("shows a receiver's control characters as escapes, never raw on the operator's terminal", async () => {
    const tls = await testTls();
    const logged = await startTestApp(database, {
      workers: false,
      config: { webhookPrivateAllowlist: ['127.0.0.0/8'], webhookCaCerts: [tls.caCert] },
    });
    // A window-title sequence (OSC ... BEL), a C1 CSI and a right-to-left override.
    const target = await startReceiver(answer(200, 'ok\u001b]0;owned\u0007 \u009b31m red \u202e done'));
    try {
      const orgId = await newOrg('--plan', 'scale');
      const key = await newKey(orgId);
      const client = logged.client(key);
      const created = await client.POST('/webhooks', { body: { url: target.url, events: ['contact.created'] } });
      const webhookId = created.data!.data.id;
      expect((await client.POST('/webhooks/{id}/test', { params: { path: { id: webhookId } } })).response.status).toBe(
        200,
      );
      const human = await admin('deliveries', '--webhook', webhookId);
      expect(human.code, human.stderr).toBe(0);
      expect(human.stdout).toContain('ok\\x1b]0;owned\\x07 \\x9b31m red \\u202e done');
      expect(human.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
      // JSON keeps the text exactly; JSON.stringify escapes the control characters.
      const [row] = parseJson<LoggedAttempt[]>((await admin('deliveries', '--webhook', webhookId, '--json')).stdout);
      expect(row!.response_excerpt).toBe('ok\u001b]0;owned\u0007 \u009b31m red \u202e done');
    } finally {
      await target.close();
      await logged.close();
    }
  });
});

describe('operating webhook endpoints', CLI_TESTS, () => {
  it('lists, switches off and on, replays failed deliveries once, redelivers one, and runs retention', async () => {
    const logged = await startTestApp(database, {
      workers: false,
      config: { webhookPrivateAllowlist: ['127.0.0.0/8'] },
    });
    try {
      const orgId = await newOrg('--plan', 'scale');
      const key = await newKey(orgId);
      const client = logged.client(key);
      const since = new Date(Date.now() - 1_000).toISOString();
      // Port 4 has no listener: each test send fails, and its delivery is finished as failed.
      const created = await client.POST('/webhooks', {
        body: { url: 'https://127.0.0.1:4/ops', events: ['contact.created'] },
      });
      const webhookId = created.data!.data.id;
      for (let i = 0; i < 2; i += 1) await client.POST('/webhooks/{id}/test', { params: { path: { id: webhookId } } });

      const listed = await admin('webhook', 'list', '--org', orgId, '--json');
      expect(JSON.parse(listed.stdout)).toMatchObject([{ id: webhookId, active: true }]);
      expect((await admin('webhook', 'list', '--org', orgId)).stdout).toContain(webhookId);

      // Both test sends had finished (failed): switching off abandons nothing, and says so.
      expect(JSON.parse((await admin('webhook', 'disable', webhookId, '--json')).stdout)).toMatchObject({
        active: false,
        abandoned_deliveries: 0,
      });
      const refused = await admin('replay', '--webhook', webhookId, '--since', since);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('switched off');
      expect(JSON.parse((await admin('webhook', 'enable', webhookId, '--json')).stdout)).toMatchObject({
        active: true,
      });
      // The operator's switches are in the org's audit log.
      const audited = await database.db
        .selectFrom('audit_log')
        .select(['actor', 'action', 'target'])
        .where('org_id', '=', orgId)
        .where('action', 'like', 'webhook.%')
        .orderBy('at')
        .execute();
      expect(audited).toEqual([
        { actor: 'cli', action: 'webhook.disabled', target: webhookId },
        { actor: 'cli', action: 'webhook.enabled', target: webhookId },
      ]);

      const pendingCount = async () =>
        (
          await database.db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('webhook_id', '=', webhookId)
            .where('status', '=', 'pending')
            .execute()
        ).length;
      // Of the two failed events, one was brought by a later delivery (as a retry would): it is not sent again.
      const failed = await database.db
        .selectFrom('webhook_deliveries')
        .select(['id', 'event_id'])
        .where('webhook_id', '=', webhookId)
        .where('status', '=', 'failed')
        .orderBy('seq')
        .execute();
      expect(failed).toHaveLength(2);
      await database.db
        .insertInto('webhook_deliveries')
        .values({ webhook_id: webhookId, org_id: orgId, event_id: failed[0]!.event_id, status: 'succeeded' })
        .execute();
      const dry = parseJson<Replay>(
        (await admin('replay', '--webhook', webhookId, '--since', since, '--dry-run', '--json')).stdout,
      );
      expect(dry).toEqual({ dry_run: true, queued: [failed[1]!.event_id], made_due: [], already_pending: [] });
      expect(await pendingCount()).toBe(0);

      // A replay whose audit entry cannot be written queues nothing: the two commit together.
      await sql`CREATE FUNCTION refuse_replay_audit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'audit refused by the test'; END $$`.execute(database.db);
      await sql`CREATE TRIGGER refuse_replay_audit BEFORE INSERT ON audit_log FOR EACH ROW
        WHEN (NEW.action = 'webhook.replayed') EXECUTE FUNCTION refuse_replay_audit()`.execute(database.db);
      try {
        const unaudited = await admin('replay', '--webhook', webhookId, '--since', since);
        expect(unaudited.code).toBe(1);
        expect(unaudited.stderr).toContain('audit refused by the test');
        expect(await pendingCount()).toBe(0);
      } finally {
        await sql`DROP TRIGGER refuse_replay_audit ON audit_log`.execute(database.db);
        await sql`DROP FUNCTION refuse_replay_audit()`.execute(database.db);
      }

      // A replay racing a switch-off waits for it, then queues nothing and says why.
      let racing: Promise<CliResult> | undefined;
      await database.db.transaction().execute(async (trx) => {
        await updateWebhookRow(trx, orgId, webhookId, { active: false, now: new Date() });
        racing = admin('replay', '--webhook', webhookId, '--since', since);
        // The replay's process has to start first, which takes as long as the machine needs.
        await waitFor('the replay to wait for the switch-off', () => blocksAnother(trx), HANG_GUARD_MS);
      });
      const raced = await racing!;
      expect(raced.code).toBe(1);
      expect(raced.stderr).toContain('switched off');
      expect(await pendingCount()).toBe(0);
      await updateWebhookRow(database.db, orgId, webhookId, { active: true, now: new Date() });

      const replayed = parseJson<Replay>(
        (await admin('replay', '--webhook', webhookId, '--since', since, '--json')).stdout,
      );
      expect(replayed.queued).toEqual(dry.queued);
      expect(await pendingCount()).toBe(1);
      const again = parseJson<Replay>(
        (await admin('replay', '--webhook', webhookId, '--since', since, '--json')).stdout,
      );
      expect(again).toMatchObject({ queued: [], made_due: [], already_pending: dry.queued });
      expect(await pendingCount()).toBe(1);

      const first = failed[1];
      expect(JSON.parse((await admin('redeliver', first!.id, '--json')).stdout)).toMatchObject({ queued: false });
      // The other event has no delivery pending: redelivering it queues one, and the log says who did.
      const redelivered = parseJson<{ queued: boolean }>((await admin('redeliver', failed[0]!.id, '--json')).stdout);
      expect(redelivered).toMatchObject({ queued: true });
      expect(await pendingCount()).toBe(2);
      const operatorActions = await database.db
        .selectFrom('audit_log')
        .select(['actor', 'action', 'target'])
        .where('org_id', '=', orgId)
        .where('action', 'in', ['webhook.replayed', 'webhook.redelivered'])
        .orderBy('at')
        .execute();
      expect(operatorActions).toEqual([
        { actor: 'cli', action: 'webhook.replayed', target: webhookId },
        { actor: 'cli', action: 'webhook.redelivered', target: failed[0]!.id },
      ]);
      expect((await admin('replay', '--webhook', webhookId, '--since', 'yesterday')).code).toBe(2);
      // A day the calendar does not have is refused, not rolled over into the next month.
      const noSuchDay = await admin('replay', '--webhook', webhookId, '--since', '2026-02-30T00:00:00Z');
      expect([noSuchDay.code, noSuchDay.stderr]).toEqual([
        2,
        expect.stringContaining('--since must be an ISO 8601 time'),
      ]);

      const dryRetention = parseJson<Retention>((await admin('retention', 'run', '--dry-run', '--json')).stdout);
      expect(dryRetention).toMatchObject({ ran: true, dry_run: true });
      expect(Object.keys(dryRetention.removed!)).toContain('webhook_deliveries');
      expect(JSON.parse((await admin('retention', 'run', '--json')).stdout)).toMatchObject({
        ran: true,
        dry_run: false,
      });
    } finally {
      await logged.close();
    }
  });
});

describe('contacts import', CLI_TESTS, () => {
  it('reads a relative path from where `npm run admin` was typed, and says when a path is a directory', async () => {
    const orgId = await newOrg();
    await mkdir(path.join(dir, 'typed-here'), { recursive: true });
    await writeFile(path.join(dir, 'typed-here', 'few.csv'), 'phone_e164,name\n+919811000091,Nila\n');
    // What npm sets for one of the package's scripts: it runs them from the package's root.
    const npm = { npm_package_name: 'voice-call-api', npm_lifecycle_event: 'admin', INIT_CWD: dir };
    const relative = await runAdmin(database.url, ['contacts', 'import', '--org', orgId, 'typed-here/few.csv'], npm);
    expect(relative.code, relative.stderr).toBe(0);
    expect(relative.stdout).toContain('1 rows, 1 created');

    const folder = await admin('contacts', 'import', '--org', orgId, dir);
    expect(folder.code).toBe(1);
    expect(folder.stderr.trim()).toBe(`Error: a directory, not a file: ${dir}`);
  });

  async function events(orgId: string) {
    return database.db
      .selectFrom('events')
      .select(['id', 'data'])
      .where('org_id', '=', orgId)
      .where('kind', '=', 'contact.created')
      .execute();
  }

  it('imports valid rows, reports rejected ones (duplicates within the file too) by line, emits one event per new contact, and is idempotent', async () => {
    const orgId = await newOrg();
    const file = path.join(dir, 'contacts.csv');
    await writeFile(
      file,
      [
        'phone_e164,name,email,language_pref,consent_capture,metadata',
        '+919811000001,Asha,asha@example.com,hi-IN,website_form,"{""tier"":""gold""}"',
        '+919811000002,Ravi,,,,',
        'not-a-number,Bad,,,manual,',
        '+919811000003,Meera,meera@,,manual,',
        '+919811000001,Asha Verma,,,,',
      ].join('\n') + '\n',
    );
    const first = await admin('contacts', 'import', '--org', orgId, file, '--json');
    // Rows were rejected: the exit status says so, after the others were imported.
    expect(first.code, first.stderr).toBe(1);
    const summary = parseJson<ImportJson>(first.stdout);
    // Every row is accounted for: rows = created + updated + rejected.
    expect(summary).toMatchObject({ rows: 5, created: 2, updated: 0, rejected: 3 });
    expect(summary.rejections.map((rejection) => rejection.line)).toEqual([4, 5, 6]);
    expect(summary.rejections[0]!.error).toMatchObject({ code: 'invalid_request', param: 'phone_e164' });
    expect(summary.rejections[1]!.error).toMatchObject({ code: 'invalid_request', param: 'email' });
    // A repeated number is not merged: the first row wins and the repeat is listed by line.
    const repeat = 'phone_e164: +919811000001 repeats line 2; only the first row of a number is imported';
    expect(summary.rejections[2]!.error).toEqual({
      code: 'invalid_request',
      param: 'phone_e164',
      message: repeat,
      details: { phone_e164: ['+919811000001 repeats line 2; only the first row of a number is imported'] },
    });
    const human = await admin('contacts', 'import', '--org', orgId, file);
    expect(human.code, human.stderr).toBe(1);
    expect(human.stdout).toContain(`\n  line 6: ${repeat}\n`);
    const help = await admin('contacts', 'import', '--help');
    expect(help.stdout).toContain('A phone number that repeats an earlier line is skipped too');

    const stored = await database.db
      .selectFrom('contacts')
      .selectAll()
      .where('org_id', '=', orgId)
      .orderBy('phone_e164')
      .execute();
    expect(stored.map((row) => [row.phone_e164, row.name, row.consent_capture])).toEqual([
      ['+919811000001', 'Asha', 'website_form'],
      ['+919811000002', 'Ravi', 'imported'],
    ]);
    expect(stored[0]!.metadata).toEqual({ tier: 'gold' });
    expect(stored[0]!.email).toBe('asha@example.com');
    expect((await events(orgId)).length).toBe(2);

    const again = await admin('contacts', 'import', '--org', orgId, file, '--json');
    expect(again.code, again.stderr).toBe(1);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 5, created: 0, updated: 2, rejected: 3 });
    expect((await events(orgId)).length).toBe(2);
  });

  it('reports a rejected row by the line it starts on, with quoted line breaks, blank lines and CRLF', async () => {
    const orgId = await newOrg();
    const rows = [
      'phone_e164,name,email',
      '',
      '+919811200001,"Asha',
      'Verma",',
      '',
      'not-a-number,Bad,',
      '+919811200002,"Ravi',
      '',
      'Kumar",ravi@',
      '+919811200001,Asha again,',
    ];
    for (const newline of ['\n', '\r\n']) {
      const file = path.join(dir, `multi-line-${newline.length}.csv`);
      await writeFile(file, rows.join(newline) + newline);
      const result = await admin('contacts', 'import', '--org', orgId, file, '--json');
      const summary = parseJson<ImportJson>(result.stdout);
      const label = JSON.stringify(newline);
      expect(summary, label).toMatchObject({ rows: 4, rejected: 3 });
      expect(
        summary.rejections.map((rejection) => [rejection.line, rejection.error.param]),
        label,
      ).toEqual([
        [6, 'phone_e164'],
        [7, 'email'],
        [10, 'phone_e164'],
      ]);
      expect(summary.rejections[2]!.error.message, label).toContain('repeats line 3');
    }
  });

  it('rejects each bad row with the error object POST /contacts answers for the same values', async () => {
    const orgId = await newOrg();
    const key = await newKey(orgId);
    const columns = ['phone_e164', 'name', 'email', 'language_pref', 'consent_capture', 'metadata'] as const;
    const rows: Array<Partial<Record<(typeof columns)[number], string>>> = [
      { phone_e164: 'not-a-number', name: 'Bad', consent_capture: 'manual' },
      { phone_e164: '+919811100002', email: 'meera@', consent_capture: 'manual' },
      { phone_e164: '+919811100003', language_pref: 'english', consent_capture: 'manual' },
      { phone_e164: '+919811100004', consent_capture: 'phone' },
      { phone_e164: '+919811100005', consent_capture: 'manual', metadata: '[1,2]' },
      { phone_e164: '+919811100006', consent_capture: 'manual', metadata: '{"tier":"a\\u0000b"}' },
      { phone_e164: '+919811100007', name: 'Nul\u0000Byte', consent_capture: 'manual' },
      { phone_e164: '+919811100008', consent_capture: 'manual', metadata: '{"__proto__":{"x":1}}' },
      { phone_e164: '12345', email: 'x@', consent_capture: 'manual' },
      { phone_e164: '+919811100010', consent_capture: 'manual', metadata: '{"n":1e400}' },
    ];
    const quote = (cell = '') => `"${cell.replace(/"/g, '""')}"`;
    const file = path.join(dir, 'api-errors.csv');
    await writeFile(
      file,
      [columns.join(','), ...rows.map((row) => columns.map((c) => quote(row[c])).join(','))].join('\n'),
    );

    const result = await admin('contacts', 'import', '--org', orgId, file, '--json');
    expect(result.code, result.stderr).toBe(1);
    const summary = parseJson<ImportJson>(result.stdout);
    expect(summary).toMatchObject({ rows: rows.length, created: 0, updated: 0, rejected: rows.length });
    // A nullable field's message says what the value should be, without the null branch's "must be null".
    expect(summary.rejections[2]!.error.details.language_pref).not.toContain('must be null');
    // Patterns and formats are said in words with the refused value, as the API says them.
    expect(summary.rejections[2]!.error.details.language_pref).toContain(
      'must be a language tag: two lower-case letters, a hyphen and two capital letters, like en-IN; got "english"',
    );
    expect(summary.rejections[1]!.error.details.email).toEqual([
      'must be an email address, like name@example.com; got "meera@"',
    ]);

    for (const [index, row] of rows.entries()) {
      const body = Object.fromEntries(
        Object.entries(row).map(([column, cell]) => [column, column === 'metadata' ? JSON.parse(cell) : cell]),
      );
      // JSON.stringify writes 1e400 (Infinity) as null; the API must see the number as sent. Sent
      // straight to the app, not through the Prism judge of test:prism, which re-serialises the body.
      const text = JSON.stringify(body).replace('"n":null', '"n":1e400');
      const answer = await fetch(`${app.apiUrl}/contacts`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: text,
      });
      expect(answer.status, text).toBe(400);
      const { code, message, param, details } = ((await answer.json()) as { error: Record<string, unknown> }).error;
      expect(summary.rejections[index], text).toEqual({ line: index + 2, error: { code, message, param, details } });
    }
    expect(summary.rejections[8]!.error.details).toEqual({
      phone_e164: ['must be an E.164 number: a + followed by 7 to 15 digits, the first not 0; got "12345"'],
      email: ['must be an email address, like name@example.com; got "x@"'],
    });

    const human = await admin('contacts', 'import', '--org', orgId, file);
    expect(human.code, human.stderr).toBe(1);
    expect(human.stdout).toContain(`\n  line 2: ${summary.rejections[0]!.error.message}\n`);
    expect(human.stdout).toContain(`\n  line 10: ${summary.rejections[8]!.error.message}; email: `);
  });

  it('refuses a file with a bad header, bad encoding or broken CSV before writing anything', async () => {
    const orgId = await newOrg();
    const badHeader = path.join(dir, 'bad-header.csv');
    await writeFile(badHeader, 'phone,full_name\n+919811000009,X\n');
    const latin1 = path.join(dir, 'latin1.csv');
    await writeFile(
      latin1,
      Buffer.concat([
        Buffer.from('phone_e164,name,consent_capture\n+919811000010,Jos'),
        Buffer.from([0xe9]),
        Buffer.from(',manual\n'),
      ]),
    );
    const broken = path.join(dir, 'broken.csv');
    const lines = ['phone_e164,name,consent_capture'];
    for (let i = 0; i < 3000; i += 1) lines.push(`+9198120${String(i).padStart(5, '0')},Name ${i},manual`);
    lines.push('+919812099999,"unterminated,manual');
    await writeFile(broken, lines.join('\n') + '\n');

    const empty = path.join(dir, 'empty.csv');
    await writeFile(empty, '');
    // One line over 1 MiB, pure ASCII: refused for its length, read in constant memory.
    const longLine = path.join(dir, 'long-line.csv');
    await writeFile(longLine, `phone_e164,name\n+919811000012,${'x'.repeat(3 * 1024 * 1024)}\n`);
    const escapeHeader = path.join(dir, 'escape-header.csv');
    await writeFile(escapeHeader, 'phone_e164,\u001b[2Jname\u0007\n+919811000011,X\n');
    for (const [file, message] of [
      [badHeader, 'unknown column(s) phone, full_name'],
      [escapeHeader, 'unknown column(s) \\x1b[2Jname\\x07'],
      [empty, 'the file has no rows'],
      [longLine, 'line 2 is longer than 1 MiB'],
      [latin1, 'not valid UTF-8'],
      [broken, 'malformed CSV'],
      [path.join(dir, 'missing.csv'), 'file not found'],
    ] as const) {
      const result = await admin('contacts', 'import', '--org', orgId, file);
      expect(result.code, file).toBe(1);
      expect(result.stderr, file).toContain(message);
      expect(result.stderr, file).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
      // The refusal is the one line on stderr, with --json too.
      expect(result.stderr.trimEnd().split('\n'), file).toHaveLength(1);
      const json = await admin('contacts', 'import', '--org', orgId, file, '--json');
      expect(Object.keys(JSON.parse(json.stderr) as object), file).toEqual(['error']);
    }
    const count = await database.db
      .selectFrom('contacts')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('org_id', '=', orgId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
    expect(await events(orgId)).toHaveLength(0);
  });

  it('reports cells the database cannot store by line, imports the rest, and accounts for every row', async () => {
    const orgId = await newOrg();
    const file = path.join(dir, 'edges.csv');
    const rows = ['phone_e164,name,consent_capture'];
    for (let i = 0; i < 1500; i += 1) rows.push(`+9198130${String(i).padStart(5, '0')},Row ${i},manual`);
    rows[700] = '+919813099990,Nul\u0000Byte,manual';
    rows[1200] = '+91981,Short number,manual';
    await writeFile(file, rows.join('\n') + '\n');
    const result = await admin('contacts', 'import', '--org', orgId, file, '--json');
    expect(result.code, result.stderr).toBe(1);
    const summary = parseJson<ImportJson>(result.stdout);
    expect(summary).toMatchObject({ rows: 1500, created: 1498, updated: 0, rejected: 2 });
    expect(summary.created + summary.updated + summary.rejected).toBe(summary.rows);
    expect(summary.rejections).toEqual([
      {
        line: 701,
        error: expect.objectContaining({ message: 'name: must not contain the character U+0000' }) as unknown,
      },
      {
        line: 1201,
        error: expect.objectContaining({
          message: 'phone_e164: must be an E.164 number: a + followed by 7 to 15 digits, the first not 0; got "+91981"',
        }) as unknown,
      },
    ]);
    expect(await events(orgId)).toHaveLength(1498);

    // Bytes that are not UTF-8 are reported by line, and nothing is imported.
    const broken = path.join(dir, 'not-utf8.csv');
    await writeFile(
      broken,
      Buffer.concat([
        Buffer.from('phone_e164,name,consent_capture\n+919813200001,Fine,manual\n+919813200002,Bad'),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from(',manual\n+919813200003,Also bad'),
        Buffer.from([0xff]),
        Buffer.from(',manual\n'),
      ]),
    );
    const refused = await admin('contacts', 'import', '--org', orgId, broken);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('not valid UTF-8 text: line 3, 4');
    expect(await events(orgId)).toHaveLength(1498);
  });

  it(
    'imports 100,000 rows in batches with progress on stderr',
    async () => {
      const orgId = await newOrg();
      const file = path.join(dir, 'large.csv');
      const out = createWriteStream(file);
      out.write('phone_e164,name,consent_capture\n');
      for (let i = 0; i < 100_000; i += 1) out.write(`+9197${String(i).padStart(8, '0')},Contact ${i},imported\n`);
      await new Promise<void>((resolve) => out.end(resolve));
      const result = await admin('contacts', 'import', '--org', orgId, file, '--json');
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ rows: 100_000, created: 100_000, updated: 0, rejected: 0 });
      expect(result.stderr).toContain('100000 rows read');
      // Counted by the database: reading 100,000 events back whole can pass the test handle's query
      // timeout on a busy machine, and what is judged is the number.
      const counted = await database.db
        .selectFrom('events')
        .select((eb) => eb.fn.countAll<string>().as('n'))
        .where('org_id', '=', orgId)
        .where('kind', '=', 'contact.created')
        .executeTakeFirstOrThrow();
      expect(Number(counted.n)).toBe(100_000);
    },
    HANG_GUARD_MS,
  );
});
