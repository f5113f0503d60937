// `admin user ...` as a separate process: invite (a one-time link), list, reset (a new link, old ones
// void), remove, with the audit log they leave; and the key commands' audit entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg } from './support/app.js';
import { runAdmin } from './support/cli.js';
import { acceptLink, findLink } from '../src/members/service.js';
import { parseJson } from './support/json.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

const admin = (...args: string[]) => runAdmin(database.url, args);
const TOKEN = /\/dashboard\/invite\/([A-Za-z0-9_-]{43})$/;

describe('admin user', { timeout: 120_000 }, () => {
  it('invites, lists, resets, changes the role of and removes a dashboard user, each change audited', async () => {
    const org = await createTestOrg(database.db);
    const invited = await admin(
      'user',
      'invite',
      '--org',
      org.orgId,
      '--email',
      'Ana@Example.com',
      '--role',
      'admin',
      '--json',
    );
    expect(invited.code, invited.stderr).toBe(0);
    const body = parseJson<{ id: string; link: string }>(invited.stdout);
    expect(body).toMatchObject({ org_id: org.orgId, email: 'ana@example.com', role: 'admin' });
    const first = TOKEN.exec(body.link)![1]!;
    expect(await findLink(database.db, first)).toMatchObject({ email: 'ana@example.com', purpose: 'invite' });
    const stored = await database.db.selectFrom('dashboard_links').select('token_hash').execute();
    expect(stored.map((row) => row.token_hash)).not.toContain(first);

    const again = await admin('user', 'invite', '--org', org.orgId, '--email', 'ana@example.com', '--role', 'viewer');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('is already a member of this organisation');
    const badRole = await admin('user', 'invite', '--org', org.orgId, '--email', 'b@example.com', '--role', 'owner');
    expect(badRole.code).toBe(2);

    const listed = await admin('user', 'list', '--org', org.orgId, '--json');
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        id: body.id,
        email: 'ana@example.com',
        role: 'admin',
        password_set: false,
        created_at: expect.any(String) as unknown,
      },
    ]);

    const reset = await admin('user', 'reset', 'ana@example.com', '--json');
    expect(reset.code, reset.stderr).toBe(0);
    expect(parseJson<{ admins_left: number }>(reset.stdout).admins_left).toBe(0);
    const second = TOKEN.exec(parseJson<{ link: string }>(reset.stdout).link)![1]!;
    expect(await findLink(database.db, first)).toBeUndefined();
    // Six different emoji are twelve UTF-16 units but six characters; 'e' and a combining accent is one.
    const sixEmoji = '\u{1F600}\u{1F601}\u{1F602}\u{1F603}\u{1F604}\u{1F605}';
    for (const weak of ['short', ' '.repeat(12), 'a'.repeat(40), sixEmoji, 'e\u0301'.repeat(12)]) {
      await expect(acceptLink(database.db, second, weak)).rejects.toMatchObject({ param: 'password' });
    }
    await acceptLink(database.db, second, 'a long enough password');
    await expect(acceptLink(database.db, second, 'a long enough password')).rejects.toMatchObject({
      code: 'not_found',
    });
    const hash = await database.db.selectFrom('dashboard_users').select('password_hash').executeTakeFirstOrThrow();
    expect(hash.password_hash).toMatch(/^scrypt\$32768\$8\$1\$/);

    // A role change: the only admin made a viewer leaves none, and the operator is told; again, no change.
    const demoted = await admin('user', 'role', 'ana@example.com', '--role', 'viewer', '--json');
    expect(demoted.code, demoted.stderr).toBe(0);
    expect(parseJson(demoted.stdout)).toEqual({
      email: 'ana@example.com',
      role: 'viewer',
      changed: true,
      admins_left: 0,
    });
    const twice = await admin('user', 'role', 'ana@example.com', '--role', 'viewer');
    expect(twice.stdout).toContain('ana@example.com was already a viewer.');
    expect(twice.stdout).toContain(`Note: org ${org.orgId} now has no admin who can sign in to the dashboard`);
    expect((await admin('user', 'role', 'ana@example.com', '--role', 'owner')).code).toBe(2);
    const promoted = await admin('user', 'role', 'ana@example.com', '--role', 'admin');
    expect(promoted.code, promoted.stderr).toBe(0);
    expect(promoted.stdout.trim()).toBe('ana@example.com is now an admin.');

    const removed = await admin('user', 'remove', 'ana@example.com');
    expect(removed.code, removed.stderr).toBe(0);
    // Ana was the org's only admin: the operator is told, and how to invite another.
    expect(removed.stdout).toContain(`Note: org ${org.orgId} now has no admin who can sign in to the dashboard`);
    expect(removed.stdout).toContain(`"admin user invite --org ${org.orgId} --email EMAIL --role admin"`);
    expect((await admin('user', 'remove', 'ana@example.com')).code).toBe(1);

    const key = await admin('key', 'create', '--org', org.orgId, '--label', 'CI', '--json');
    const { prefix } = parseJson<{ prefix: string }>(key.stdout);
    expect((await admin('key', 'revoke', prefix)).code).toBe(0);

    const audit = await database.db
      .selectFrom('audit_log')
      .select(['actor', 'action', 'target'])
      .where('org_id', '=', org.orgId)
      .orderBy('id')
      .execute();
    expect(audit).toEqual([
      { actor: 'cli', action: 'member.invited (admin)', target: 'ana@example.com' },
      { actor: 'cli', action: 'member.reset', target: 'ana@example.com' },
      { actor: 'ana@example.com', action: 'member.password_set', target: null },
      { actor: 'cli', action: 'member.role_changed (viewer)', target: 'ana@example.com' },
      { actor: 'cli', action: 'member.role_changed (admin)', target: 'ana@example.com' },
      { actor: 'cli', action: 'member.removed', target: 'ana@example.com' },
      { actor: 'cli', action: 'api_key.created', target: `svc_live_${prefix}_${'*'.repeat(32)}` },
      { actor: 'cli', action: 'api_key.revoked', target: `svc_live_${prefix}_${'*'.repeat(32)}` },
    ]);
  });

  it('invites an address that is in another org like any other, and names the org to change it by', async () => {
    const [first, second] = [await createTestOrg(database.db), await createTestOrg(database.db)];
    for (const org of [first, second]) {
      const invited = await admin(
        'user',
        'invite',
        '--org',
        org.orgId,
        '--email',
        'two@example.com',
        '--role',
        'viewer',
      );
      expect(invited.code, invited.stderr).toBe(0);
      expect(invited.stdout).toContain('Invited two@example.com (viewer). One-time link (72 hours):');
    }
    const unnamed = await admin('user', 'reset', 'two@example.com');
    expect(unnamed.code).toBe(1);
    expect(unnamed.stderr).toContain('two@example.com is a member of several orgs; name one');
    const removed = await admin('user', 'remove', 'two@example.com', '--org', second.orgId, '--json');
    expect(removed.code, removed.stderr).toBe(0);
    const left = await database.db
      .selectFrom('dashboard_users')
      .select('org_id')
      .where('email', '=', 'two@example.com')
      .execute();
    expect(left).toEqual([{ org_id: first.orgId }]);
  });

  it('builds one-time links on --base-url, and warns when neither it nor PUBLIC_BASE_URL says where the dashboard is', async () => {
    const org = await createTestOrg(database.db);
    const invite = (email: string, ...rest: string[]) =>
      runAdmin(database.url, ['user', 'invite', '--org', org.orgId, '--email', email, '--role', 'viewer', ...rest], {
        PUBLIC_BASE_URL: undefined,
        PORT: '8080',
      });

    const guessed = await invite('guess@example.com');
    expect(guessed.code, guessed.stderr).toBe(0);
    expect(guessed.stdout).toMatch(/^http:\/\/127\.0\.0\.1:8080\/dashboard\/invite\//m);
    expect(guessed.stderr).toContain('Warning: PUBLIC_BASE_URL is not set');
    expect(guessed.stderr).toContain('--base-url');

    const given = await invite('given@example.com', '--base-url', 'https://voice.example.com/', '--json');
    expect(given.code, given.stderr).toBe(0);
    expect(parseJson<{ link: string }>(given.stdout).link).toMatch(
      /^https:\/\/voice\.example\.com\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/,
    );
    expect(given.stderr).toBe('');

    const reset = await runAdmin(database.url, ['user', 'reset', 'given@example.com', '--json'], {
      PUBLIC_BASE_URL: 'https://dash.example.com',
    });
    expect(parseJson<{ link: string }>(reset.stdout).link).toMatch(
      /^https:\/\/dash\.example\.com\/dashboard\/invite\//,
    );
    expect(reset.stderr).toBe('');

    const bad = await invite('bad@example.com', '--base-url', 'voice.example.com');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--base-url must be an absolute http:// or https:// URL');
  });
});
