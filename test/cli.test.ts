// The operator CLI as a separate process: orgs, agents, keys, credits, plans, and CSV contact import.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { rawRequest, startTestApp, type TestApp } from './support/app.js';
import { runAdmin } from './support/cli.js';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';

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

// Every test here starts the CLI as separate Node processes (through tsx), up to nine in a row; on a
// loaded machine one start takes seconds, so the bound is sized to that rather than the default 30 s.
const CLI_TESTS = { timeout: 120_000 };

async function newOrg(...extra: string[]): Promise<string> {
  const result = await admin('org', 'create', '--name', 'CLI org', '--json', ...extra);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout).id;
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
    const org = JSON.parse(created.stdout);
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
    const { key: apiKey, prefix } = JSON.parse(key.stdout);
    expect(apiKey).toMatch(/^svc_live_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
    const stored = await database.db
      .selectFrom('api_keys')
      .select('secret_hash')
      .where('prefix', '=', prefix)
      .executeTakeFirstOrThrow();
    expect(stored.secret_hash).not.toContain(apiKey.slice(-32));

    const listed = await admin('key', 'list', '--org', org.id);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`svc_live_${prefix}_${'*'.repeat(32)}`);
    expect(listed.stdout).not.toContain(apiKey);

    const auth = { headers: { Authorization: `Bearer ${apiKey}` } };
    expect((await rawRequest(app, 'GET', '/contacts', auth)).status).toBe(200);
    const revoked = await admin('key', 'revoke', prefix);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await rawRequest(app, 'GET', '/contacts', auth)).status).toBe(401);
    expect((await admin('key', 'revoke', prefix)).code).toBe(1);
  });

  it('adds credits and sets or removes the plan', async () => {
    const orgId = await newOrg('--no-plan');
    const added = await admin('credits', 'add', '--org', orgId, '--paise', '2500', '--json');
    expect(added.code, added.stderr).toBe(0);
    expect(JSON.parse(added.stdout)).toMatchObject({ balance_paise: 2500 });
    expect(await balanceAndLedgerSum(database.db, orgId)).toEqual({ balance: 2500, ledgerSum: 2500 });

    expect((await admin('plan', 'set', '--org', orgId, '--plan', 'starter')).code).toBe(0);
    let org = await database.db.selectFrom('orgs').select('plan_id').where('id', '=', orgId).executeTakeFirstOrThrow();
    expect(org.plan_id).toBe('starter');
    expect((await admin('plan', 'set', '--org', orgId, '--plan', 'none')).code).toBe(0);
    org = await database.db.selectFrom('orgs').select('plan_id').where('id', '=', orgId).executeTakeFirstOrThrow();
    expect(org.plan_id).toBeNull();
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

describe('delivery log', CLI_TESTS, () => {
  it("prints an endpoint's attempts newest first", async () => {
    const logged = await startTestApp(database, {
      workers: false,
      config: { webhookPrivateAllowlist: ['127.0.0.0/8'] },
    });
    try {
      const orgId = await newOrg('--plan', 'scale');
      const key = JSON.parse((await admin('key', 'create', '--org', orgId, '--json')).stdout).key;
      const client = logged.client(key);
      // Port 9 (discard) has no listener here, so each test delivery fails with a refused connection.
      const created = await client.POST('/webhooks', {
        body: { url: 'https://127.0.0.1:9/hook', events: ['contact.created'] },
      });
      expect(created.response.status).toBe(201);
      const webhookId = created.data!.data.id;
      for (let i = 0; i < 2; i += 1) {
        const tested = await client.POST('/webhooks/{id}/test', { params: { path: { id: webhookId } } });
        expect(tested.response.status).toBe(200);
      }
      const result = await admin('deliveries', '--webhook', webhookId, '--json');
      expect(result.code, result.stderr).toBe(0);
      const rows = JSON.parse(result.stdout);
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({ event: 'webhook.test', attempt: 1, status_code: null });
      expect(rows[0].failure_kind).toBeTruthy();
      expect(Date.parse(rows[0].attempted_at)).toBeGreaterThanOrEqual(Date.parse(rows[1].attempted_at));
      const human = await admin('deliveries', '--webhook', webhookId);
      expect(human.stdout).toContain('webhook.test');
      expect((await admin('deliveries', '--webhook', '00000000-0000-4000-8000-000000000000')).code).toBe(1);
      expect((await admin('deliveries')).code).toBe(2);
    } finally {
      await logged.close();
    }
  });
});

describe('contacts import', CLI_TESTS, () => {
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
    expect(first.code, first.stderr).toBe(0);
    const summary = JSON.parse(first.stdout);
    // Every row is accounted for: rows = created + updated + rejected.
    expect(summary).toMatchObject({ rows: 5, created: 2, updated: 0, rejected: 3 });
    expect(summary.rejections.map((rejection: { row: number }) => rejection.row)).toEqual([4, 5, 6]);
    expect(summary.rejections[0].reasons[0]).toContain('phone_e164');
    expect(summary.rejections[1].reasons[0]).toContain('email');
    expect(summary.rejections[2].reasons).toEqual([
      'phone_e164: already given on line 2; only the first row of a number is imported',
    ]);

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
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 5, created: 0, updated: 2, rejected: 3 });
    expect((await events(orgId)).length).toBe(2);
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

    for (const [file, message] of [
      [badHeader, 'unknown column(s) phone, full_name'],
      [latin1, 'not valid UTF-8'],
      [broken, 'malformed CSV'],
      [path.join(dir, 'missing.csv'), 'file not found'],
    ] as const) {
      const result = await admin('contacts', 'import', '--org', orgId, file);
      expect(result.code, file).toBe(1);
      expect(result.stderr, file).toContain(message);
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
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary).toMatchObject({ rows: 1500, created: 1498, updated: 0, rejected: 2 });
    expect(summary.created + summary.updated + summary.rejected).toBe(summary.rows);
    expect(summary.rejections).toEqual([
      { row: 701, reasons: ['name: must not contain the character U+0000'] },
      { row: 1201, reasons: [expect.stringMatching(/^phone_e164: must match the pattern/)] },
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

  it('imports 100,000 rows in batches with progress on stderr', async () => {
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
    expect(await events(orgId)).toHaveLength(100_000);
  }, 180_000);
});
