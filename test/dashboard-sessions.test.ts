// Dashboard sessions over HTTP: sign-in answers, throttling per account and address and per address (in the
// database), idle and absolute expiry, a new id per sign-in, reset and removal ending sessions at once,
// the Secure cookie behind an https PUBLIC_BASE_URL, and one-time links starting with it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANG_GUARD_MS } from './support/hang-guard.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, ManualClock, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { acceptLink, inviteMember, removeMember, requireMemberByEmail, resetMember } from '../src/members/service.js';
import { SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS } from '../src/members/policy.js';
import { loadSession, startSession } from '../src/members/sessions.js';
import { csrfTokenOf } from './support/dashboard.js';

const PASSWORD = 'a password of some length';
const by = { actor: 'cli', address: null };

let database: TestDatabase;
let clock: ManualClock;
let app: TestApp;
let org: TestOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  clock = new ManualClock();
  app = await startTestApp(database, {
    workers: false,
    clock,
    config: {
      dashboardSessionIdleMs: 60 * 60_000,
      dashboardSessionAbsoluteMs: 3 * 60 * 60_000,
      // A burst of sign-ins each checks a password (scrypt) and waits for a pooled connection; on a busy
      // machine that takes longer than the service's deadlines, whose 503s other files test.
      requestTimeoutMs: 120_000,
      dbConnectTimeoutMs: 120_000,
    },
  });
  org = await createTestOrg(database.db);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

async function member(email: string): Promise<void> {
  const { token } = await inviteMember(database.db, { orgId: org.orgId, email, role: 'admin' }, by);
  await acceptLink(database.db, token, PASSWORD);
}

async function signIn(
  email: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; cookie: string | null; body: string }> {
  const response = await fetch(`${app.baseUrl}/dashboard/login`, {
    method: 'POST',
    headers: { Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ email, password }).toString(),
    redirect: 'manual',
  });
  const setCookie = response.headers.get('set-cookie');
  return { status: response.status, cookie: setCookie?.split(';')[0] ?? null, body: await response.text() };
}

async function overviewStatus(cookie: string): Promise<number> {
  const response = await fetch(`${app.baseUrl}/dashboard`, { headers: { Cookie: cookie }, redirect: 'manual' });
  return response.status;
}

describe('dashboard sessions', { timeout: HANG_GUARD_MS }, () => {
  it('answers a wrong email and a wrong password alike, and a new session id at each sign-in', async () => {
    await member('same@example.com');
    const unknown = await signIn('nobody@example.com', PASSWORD);
    const wrong = await signIn('same@example.com', 'not the right password');
    expect(unknown.status).toBe(401);
    expect(wrong.status).toBe(401);
    expect(unknown.body.replace('nobody@example.com', 'X')).toBe(wrong.body.replace('same@example.com', 'X'));
    expect(unknown.cookie).toBeNull();

    const first = await signIn('same@example.com', PASSWORD);
    const second = await signIn('Same@Example.com', PASSWORD);
    expect(first.status).toBe(303);
    expect(first.cookie).not.toBe(second.cookie);
    expect(await overviewStatus(first.cookie!)).toBe(200);
    expect(await overviewStatus(second.cookie!)).toBe(200);
    const stored = await database.db.selectFrom('dashboard_sessions').select('id_hash').execute();
    expect(stored.map((row) => row.id_hash)).not.toContain(first.cookie!.split('=')[1]);
  });

  it('throttles an account after its failures (counted in the database) and refuses cross-site sign-ins', async () => {
    await member('throttled@example.com');
    for (let i = 0; i < SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS; i += 1) {
      expect((await signIn('throttled@example.com', 'wrong password here')).status).toBe(401);
    }
    const refused = await signIn('throttled@example.com', PASSWORD);
    expect(refused.status).toBe(429);
    expect(refused.cookie).toBeNull();
    clock.advance(16 * 60_000);
    expect((await signIn('throttled@example.com', PASSWORD)).status).toBe(303);

    const crossSite = await signIn('throttled@example.com', PASSWORD, { Origin: 'https://evil.example' });
    expect(crossSite.status).toBe(403);
    expect(crossSite.cookie).toBeNull();
  });

  it('counts sign-ins sent together against each other: a burst checks no more passwords than the limit', async () => {
    await member('burst@example.com');
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn('burst@example.com', `wrong password ${i}`)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(
      SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS,
    );
    const counted = await database.db
      .selectFrom('dashboard_sign_in_failures')
      .select('id')
      .where('subject', '=', 'account:burst@example.com')
      .execute();
    // Every password checked and found wrong is one failure; a refused attempt checked nothing.
    expect(counted.length).toBe(statuses.filter((status) => status === 401).length);
    const right = await signIn('burst@example.com', PASSWORD);
    expect(right.status).toBe(counted.length < SIGN_IN_FAILURES_PER_ACCOUNT_ADDRESS ? 303 : 429);
    clock.advance(16 * 60_000);
    expect((await signIn('burst@example.com', PASSWORD)).status).toBe(303);
  });

  it('answers a form field the database cannot store with a 400 page, not an error', async () => {
    const answer = await signIn('a\u0000@example.com', 'wrong password here');
    expect(answer.status).toBe(400);
    expect(answer.body).toContain('<!doctype html>');
    expect(answer.body).toContain('email must not contain the character U+0000; nothing was changed.');
  });

  it('refuses an invitation with a role the dashboard does not have, inviting no one', async () => {
    await member('inviter@example.com');
    const cookie = (await signIn('inviter@example.com', PASSWORD)).cookie!;
    const members = await (await fetch(`${app.baseUrl}/dashboard/members`, { headers: { Cookie: cookie } })).text();
    const csrf = csrfTokenOf(members);
    const invited = await fetch(`${app.baseUrl}/dashboard/members`, {
      method: 'POST',
      headers: { Cookie: cookie, Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, email: 'owner@example.com', role: 'owner' }).toString(),
      redirect: 'manual',
    });
    expect(invited.status).toBe(400);
    expect(await invited.text()).toContain('Choose a role: admin or viewer.');
    const users = await database.db
      .selectFrom('dashboard_users')
      .select('id')
      .where('email', '=', 'owner@example.com')
      .execute();
    expect(users).toEqual([]);
  });

  it('ends a session after the idle timeout and after its absolute lifetime', async () => {
    await member('expiry@example.com');
    const idle = (await signIn('expiry@example.com', PASSWORD)).cookie!;
    clock.advance(61 * 60_000);
    expect(await overviewStatus(idle)).toBe(302);

    const busy = (await signIn('expiry@example.com', PASSWORD)).cookie!;
    for (let i = 0; i < 3; i += 1) {
      clock.advance(50 * 60_000);
      expect(await overviewStatus(busy)).toBe(200);
    }
    clock.advance(31 * 60_000);
    expect(await overviewStatus(busy)).toBe(302);
  });

  it('keeps a session in use alive at the shortest idle timeout, a minute', async () => {
    const { user } = await inviteMember(
      database.db,
      { orgId: (await createTestOrg(database.db)).orgId, email: 'brief@example.com', role: 'viewer' },
      by,
    );
    const lifetimes = { idleMs: 60_000, absoluteMs: 24 * 60 * 60_000 };
    let now = new Date('2026-06-01T09:00:00Z');
    const { token } = await startSession(database.db, user, lifetimes, now, null);
    // Used every 50 s, less than the idle minute apart: it stays signed in.
    for (let i = 0; i < 4; i += 1) {
      now = new Date(now.getTime() + 50_000);
      expect(await loadSession(database.db, token, lifetimes, now), `use ${i + 1}`).not.toBeNull();
    }
    // Left a little over a minute since it was last used: it has ended.
    now = new Date(now.getTime() + 61_000);
    expect(await loadSession(database.db, token, lifetimes, now)).toBeNull();
  });

  it("ends a member's sessions at once when they are reset or removed, and signing out ends one on the server", async () => {
    await member('ended@example.com');
    const before = (await signIn('ended@example.com', PASSWORD)).cookie!;
    const user = await requireMemberByEmail(database.db, 'ended@example.com');
    const { token: link } = await resetMember(database.db, user, { by });
    expect(await overviewStatus(before)).toBe(302);
    // The reset takes the password away; the new link sets one again.
    expect((await signIn('ended@example.com', PASSWORD)).status).toBe(401);
    await acceptLink(database.db, link, PASSWORD);
    expect((await signIn('ended@example.com', PASSWORD)).status).toBe(303);

    await member('removed@example.com');
    const removed = (await signIn('removed@example.com', PASSWORD)).cookie!;
    await removeMember(database.db, await requireMemberByEmail(database.db, 'removed@example.com'), { by });
    expect(await overviewStatus(removed)).toBe(302);
    expect((await signIn('removed@example.com', PASSWORD)).status).toBe(401);

    const leaving = (await signIn('ended@example.com', PASSWORD)).cookie!;
    const overview = await (await fetch(`${app.baseUrl}/dashboard`, { headers: { Cookie: leaving } })).text();
    const csrf = csrfTokenOf(overview);
    const out = await fetch(`${app.baseUrl}/dashboard/logout`, {
      method: 'POST',
      headers: { Cookie: leaving, Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
      redirect: 'manual',
    });
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toContain('dashboard_session=; Max-Age=0');
    expect(await overviewStatus(leaving)).toBe(302);
  });

  it('keeps an admin who can sign in when two admins remove, reset or demote each other at the same moment', async () => {
    for (const action of ['remove', 'reset', 'make-viewer', 'remove', 'reset', 'make-viewer']) {
      const { orgId } = await createTestOrg(database.db);
      const admins = await Promise.all(
        ['first', 'second'].map(async (name) => {
          const email = `${name}-${action}-${orgId}@example.com`;
          const { user, token } = await inviteMember(database.db, { orgId, email, role: 'admin' }, by);
          await acceptLink(database.db, token, PASSWORD);
          const { cookie } = await signIn(email, PASSWORD);
          const page = await (await fetch(`${app.baseUrl}/dashboard/members`, { headers: { Cookie: cookie! } })).text();
          return { id: user.id, cookie: cookie!, csrf: csrfTokenOf(page) };
        }),
      );
      const answers = await Promise.all(
        admins.map((admin, index) =>
          fetch(`${app.baseUrl}/dashboard/members/${admins[1 - index]!.id}/${action}`, {
            method: 'POST',
            headers: { Cookie: admin.cookie, Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ _csrf: admin.csrf, _once: `${action}-${index}-${orgId}` }).toString(),
            redirect: 'manual',
          }),
        ),
      );
      const outcome = (answer: Response) => `${answer.status} ${answer.headers.get('location') ?? ''}`.trim();
      const outcomes = answers.map(outcome);
      const done = action === 'remove' ? '303 /dashboard/members' : '200';
      expect(
        outcomes.filter((entry) => entry === done),
        outcomes.join(', '),
      ).toHaveLength(1);
      // The other was refused: its admin was no longer one when its change was made (403), or was
      // already signed out by the other's change when the request began (to the sign-in page).
      const other = outcomes.find((entry) => entry !== done);
      expect(['403', '303 /dashboard/login?ended=form'], outcomes.join(', ')).toContain(other);
      const canSignIn = await database.db
        .selectFrom('dashboard_users')
        .select('id')
        .where('org_id', '=', orgId)
        .where('role', '=', 'admin')
        .where('password_hash', 'is not', null)
        .execute();
      expect(canSignIn, action).toHaveLength(1);
    }
  });

  it('says a session ended, and after a form sent too late that nothing was changed, then returns to its page', async () => {
    await member('late@example.com');
    const cookie = (await signIn('late@example.com', PASSWORD)).cookie!;
    const page = await (await fetch(`${app.baseUrl}/dashboard/suppressions`, { headers: { Cookie: cookie } })).text();
    clock.advance(61 * 60_000);

    const sent = await fetch(`${app.baseUrl}/dashboard/suppressions`, {
      method: 'POST',
      headers: {
        Cookie: cookie,
        Origin: app.baseUrl,
        Referer: `${app.baseUrl}/dashboard/suppressions?page=1`,
        'Content-Type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({
        _csrf: csrfTokenOf(page),
        phone_e164: '+919812300001',
        reason: 'complaint',
      }).toString(),
      redirect: 'manual',
    });
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(
      '/dashboard/login?next=%2Fdashboard%2Fsuppressions%3Fpage%3D1&ended=form',
    );
    const form = await (await fetch(`${app.baseUrl}${sent.headers.get('location')}`)).text();
    expect(form).toContain('Your session ended before the form was sent, so nothing was changed.');
    expect(form).toContain('<input type="hidden" name="next" value="/dashboard/suppressions?page=1" />');
    const listed = await database.db.selectFrom('suppressions').select('id').where('org_id', '=', org.orgId).execute();
    expect(listed).toEqual([]);

    // A page opened with the ended session's cookie says why it asks to sign in; one without a cookie does not.
    const opened = await fetch(`${app.baseUrl}/dashboard/calls`, { headers: { Cookie: cookie }, redirect: 'manual' });
    expect(opened.headers.get('location')).toBe('/dashboard/login?next=%2Fdashboard%2Fcalls&ended=session');
    const again = await (await fetch(`${app.baseUrl}${opened.headers.get('location')}`)).text();
    expect(again).toContain('Your session has ended. Sign in again to go on.');
    const fresh = await fetch(`${app.baseUrl}/dashboard/calls`, { redirect: 'manual' });
    expect(fresh.headers.get('location')).toBe('/dashboard/login?next=%2Fdashboard%2Fcalls');
    // A made-up reason shows nothing.
    expect(await (await fetch(`${app.baseUrl}/dashboard/login?ended=toString`)).text()).not.toContain('notice');
  });

  it('returns to the page asked for after signing in, and only to a page of the dashboard', async () => {
    await member('deep@example.com');
    const asked = await fetch(`${app.baseUrl}/dashboard/calls?status=queued`, { redirect: 'manual' });
    expect(asked.headers.get('location')).toBe('/dashboard/login?next=%2Fdashboard%2Fcalls%3Fstatus%3Dqueued');
    const form = await (await fetch(`${app.baseUrl}${asked.headers.get('location')}`)).text();
    expect(form).toContain('<input type="hidden" name="next" value="/dashboard/calls?status=queued" />');
    const landing = async (next: string) => {
      const response = await fetch(`${app.baseUrl}/dashboard/login`, {
        method: 'POST',
        headers: { Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: 'deep@example.com', password: PASSWORD, next }).toString(),
        redirect: 'manual',
      });
      expect(response.status, next).toBe(303);
      return response.headers.get('location');
    };
    expect(await landing('/dashboard/calls?status=queued')).toBe('/dashboard/calls?status=queued');
    for (const elsewhere of [
      'https://evil.example/dashboard',
      '//evil.example/dashboard',
      '/dashboard//evil.example',
      '/dashboard\\evil',
      '/dashboard/logout',
      '/dashboard/LOGIN',
      '/dashboard/Invite/abc',
      '/dashboard/../docs',
      '/dashboard/%2e%2e/api/v1/calls',
      '/dashboard/./keys',
      '/docs',
      'javascript:alert(1)',
    ]) {
      expect(await landing(elsewhere), elsewhere).toBe('/dashboard');
    }
  });

  it('answers a form body over the limit with a 413 page, not an error', async () => {
    const response = await fetch(`${app.baseUrl}/dashboard/login`, {
      method: 'POST',
      headers: { Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `email=${'a'.repeat(7 * 1024 * 1024)}`,
    });
    expect(response.status).toBe(413);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    // Not a dead end: the page leads back.
    expect(await response.text()).toContain('<a href="/dashboard">Back to the dashboard</a>');
    expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('starts a one-time link with PUBLIC_BASE_URL when it is set, else with the address the request came to', async () => {
    async function invitedLink(base: string, origin: string, email: string): Promise<string> {
      const cookie = (await signIn('linker@example.com', PASSWORD)).cookie!;
      const headers = { Cookie: cookie, Origin: origin };
      const members = await (await fetch(`${base}/dashboard/members`, { headers })).text();
      const invited = await fetch(`${base}/dashboard/members`, {
        method: 'POST',
        headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ _csrf: csrfTokenOf(members), email, role: 'viewer' }).toString(),
      });
      expect(invited.status).toBe(201);
      return /<code id="member-link">([^<]+)<\/code>/.exec(await invited.text())![1]!;
    }
    await member('linker@example.com');
    expect(await invitedLink(app.baseUrl, app.baseUrl, 'plain@example.com')).toMatch(
      new RegExp(`^${app.baseUrl}/dashboard/invite/[A-Za-z0-9_-]{43}$`),
    );
    const behindProxy = await startTestApp(database, {
      workers: false,
      config: { publicBaseUrl: 'https://dashboard.example', publicBaseUrlSet: true },
    });
    try {
      expect(await invitedLink(behindProxy.baseUrl, 'https://dashboard.example', 'proxied@example.com')).toMatch(
        /^https:\/\/dashboard\.example\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/,
      );
    } finally {
      await behindProxy.close();
    }
  });

  it('marks the cookie Secure when PUBLIC_BASE_URL is https', async () => {
    const secure = await startTestApp(database, {
      workers: false,
      config: { publicBaseUrl: 'https://dashboard.example' },
    });
    try {
      await member('secure@example.com');
      const response = await fetch(`${secure.baseUrl}/dashboard/login`, {
        method: 'POST',
        headers: { Origin: 'https://dashboard.example', 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ email: 'secure@example.com', password: PASSWORD }).toString(),
        redirect: 'manual',
      });
      expect(response.status).toBe(303);
      expect(response.headers.get('set-cookie')).toMatch(
        /^dashboard_session=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/dashboard; HttpOnly; SameSite=Lax; Secure$/,
      );
    } finally {
      await secure.close();
    }
  });
});
