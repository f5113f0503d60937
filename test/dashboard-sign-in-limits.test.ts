// Sign-in limits over HTTP behind a trusted proxy (X-Forwarded-For names the client): failures count per
// account from one address and per address, so failures from elsewhere never lock the right password out
// from a fresh address; the per-account ceiling is a last resort, audited once when it trips; and a burst
// beyond an address's places among the password hashes is answered at once with 429 and Retry-After
// while another address signs in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { acceptLink, inviteMember } from '../src/members/service.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT, SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS } from '../src/members/policy.js';

const PASSWORD = 'a password of some length';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;
// The clock stands still, so no failure leaves its window mid-test however slowly the machine runs.
const clock = new ManualClock();

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false, clock, config: { trustProxyHops: 1 } });
  org = await createTestOrg(database.db);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

async function member(email: string): Promise<void> {
  const { token } = await inviteMember(
    database.db,
    { orgId: org.orgId, email, role: 'admin' },
    { actor: 'cli', address: null },
  );
  await acceptLink(database.db, token, PASSWORD);
}

async function signIn(
  email: string,
  password: string,
  address: string,
): Promise<{ status: number; retryAfter: string | null; body: string }> {
  const response = await fetch(`${app.baseUrl}/dashboard/login`, {
    method: 'POST',
    headers: {
      Origin: app.baseUrl,
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Forwarded-For': address,
    },
    body: new URLSearchParams({ email, password }).toString(),
    redirect: 'manual',
  });
  return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.text() };
}

/**
 * Signs in as a browser's user would when the hashing pool has no place (429 with `Retry-After: 1`, which
 * a loaded machine answers to sign-ins sent together): again after that second, a few times at most.
 */
async function signInWhenPlaced(email: string, password: string, address: string) {
  let answer = await signIn(email, password, address);
  for (let tries = 1; answer.status === 429 && answer.retryAfter === '1' && tries < 30; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    answer = await signIn(email, password, address);
  }
  return answer;
}

describe('failed sign-ins from many addresses', { timeout: 180_000 }, () => {
  it('never lock out the right password from a fresh address: each address spends its failures, then a new one', async () => {
    const email = 'victim@example.com';
    await member(email);
    // Three addresses, each up to its limit for the account, all at once (the flood test scales this to
    // 200 failures over 20 addresses and reports it).
    const addresses = ['198.51.100.1', '198.51.100.2', '198.51.100.3'];
    const statuses = await Promise.all(
      addresses.map(async (address) => {
        const seen: number[] = [];
        for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS; i += 1) {
          seen.push((await signInWhenPlaced(email, `wrong password ${i}`, address)).status);
        }
        return seen;
      }),
    );
    expect(statuses.flat().filter((status) => status !== 401)).toEqual([]);
    // An address that used up its failures for the account is refused, even with the right password...
    const spent = await signIn(email, PASSWORD, addresses[0]!);
    expect(spent.status).toBe(429);
    expect(spent.retryAfter).toBe('900');
    // ...but a fresh address signs in.
    expect((await signInWhenPlaced(email, PASSWORD, '198.51.100.4')).status).toBe(303);
  });

  it('trip the per-account ceiling only as a last resort, and say so once in the audit log', async () => {
    const email = 'ceiling@example.com';
    await member(email);
    // As many failures as the ceiling allows, from addresses all over (written directly: a thousand real
    // sign-ins would take minutes of hashing).
    await database.db
      .insertInto('dashboard_sign_in_failures')
      .values(
        Array.from({ length: SIGN_IN_FAILURES_PER_ACCOUNT }, () => ({ subject: `account:${email}`, at: clock.now() })),
      )
      .execute();
    expect((await signIn(email, PASSWORD, '203.0.113.1')).status).toBe(429);
    expect((await signIn(email, PASSWORD, '203.0.113.2')).status).toBe(429);
    const entries = await database.db
      .selectFrom('audit_log')
      .select(['org_id', 'action', 'address'])
      .where('actor', '=', email)
      .where('action', '=', 'sign_in.account_throttled')
      .execute();
    expect(entries).toEqual([{ org_id: org.orgId, action: 'sign_in.account_throttled', address: '203.0.113.1' }]);
  });
});

describe('a burst of sign-ins from one address', { timeout: 120_000 }, () => {
  it('is refused beyond its hashing places at once with 429 and Retry-After, while another address signs in', async () => {
    const email = 'burst-target@example.com';
    await member(email);
    const flood = Promise.all(Array.from({ length: 40 }, (_, i) => signIn(email, `wrong password ${i}`, '192.0.2.66')));
    const right = await signInWhenPlaced(email, PASSWORD, '192.0.2.67');
    const answers = await flood;
    expect(right.status).toBe(303);
    expect(answers.filter((answer) => answer.status !== 401 && answer.status !== 429)).toEqual([]);
    const refusedAtOnce = answers.filter((answer) => answer.status === 429);
    expect(refusedAtOnce.length).toBeGreaterThan(0);
    for (const answer of refusedAtOnce) {
      expect(answer.retryAfter).toBe('1');
      expect(answer.body).toContain('Too many sign-ins are being checked right now');
    }
  });
});

describe('the audit log of a failed sign-in', { timeout: 120_000 }, () => {
  it("names the org of an address's sole membership, and no org once another org has invited it", async () => {
    const email = 'two-orgs@example.com';
    await member(email);
    const failuresIn = async (orgId: string | null) =>
      (
        await database.db
          .selectFrom('audit_log')
          .select('address')
          .where('action', '=', 'sign_in.failed')
          .where('actor', '=', email)
          .where('org_id', orgId === null ? 'is' : '=', orgId)
          .execute()
      ).map((row) => row.address);

    expect((await signIn(email, 'wrong password one', '192.0.2.51')).status).toBe(401);
    expect(await failuresIn(org.orgId)).toEqual(['192.0.2.51']);

    // Another org invites the same address and sets that membership's password through its own link:
    // it must not read where the address's sign-ins to the first org come from.
    const other = await createTestOrg(database.db);
    const { token } = await inviteMember(
      database.db,
      { orgId: other.orgId, email, role: 'viewer' },
      { actor: 'cli', address: null },
    );
    await acceptLink(database.db, token, 'another password of some length');
    expect((await signIn(email, 'wrong password two', '192.0.2.52')).status).toBe(401);
    expect(await failuresIn(other.orgId)).toEqual([]);
    expect(await failuresIn(org.orgId)).toEqual(['192.0.2.51']);
    expect(await failuresIn(null)).toEqual(['192.0.2.52']);
  });
});
