// The rest of the dashboard in Chromium: overview, calls, contacts (CSV import with its report, hostile
// names shown as text), members (invite by link, removal ends sessions), the audit log; and who may do
// what: viewers see no controls and get 403 when forcing a change, another org gets 404, a cross-site
// form post is refused and changes nothing.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { webhookEnv, endpointWithEvents, register, type WebhookEnv } from './support/webhook-env.js';
import { answer, startReceiver } from './support/webhook-receiver.js';
import { createTestOrg, rawRequest } from './support/app.js';
import type { Schemas } from './support/json.js';
import { insertWebhook } from '../src/webhooks/queries.js';
import { testNumber } from './support/calls.js';
import {
  acceptInvite,
  expectAccessible,
  invite,
  launchBrowser,
  newContext,
  signedInPage,
} from './support/dashboard.js';

let env: WebhookEnv;
let browser: Browser;
let callId: string;
let other: { orgId: string; webhookId: string };

beforeAll(async () => {
  env = await webhookEnv();
  browser = await launchBrowser();
  const placed = await rawRequest<Schemas['CallCreatedResponse']>(env.app, 'POST', '/calls', {
    headers: { Authorization: `Bearer ${env.org.key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ agent_id: env.org.agentId, to_e164: testNumber('4242'), metadata: { note: '<b>bold</b>' } }),
  });
  expect(placed.status).toBe(201);
  callId = placed.body.data.id;
  other = await endpointWithEvents(env.database.db, 1);
});

afterAll(async () => {
  await browser?.close();
  await env?.close();
});

function collectDialogs(page: Page): string[] {
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return dialogs;
}

async function csrfOf(page: Page): Promise<string> {
  return page.locator('input[name="_csrf"]').first().inputValue();
}

describe('pages', { timeout: 120_000 }, () => {
  it('shows the overview, the calls with their filter and detail, and passes axe on each', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    expect(await page.locator('dl').textContent()).toContain('₹');
    expect(await page.getByRole('row').filter({ hasText: 'queued' }).textContent()).toContain('1');
    await expectAccessible(page);

    await page.getByRole('link', { name: 'Calls' }).click();
    await page.getByRole('heading', { name: 'Calls' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Status').selectOption('completed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No calls in status completed.').waitFor();
    await page.getByLabel('Status').selectOption('queued');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('link', { name: callId }).click();
    await page.getByRole('heading', { name: 'Call', exact: true }).waitFor();
    expect(await page.locator('main').textContent()).toContain('<b>bold</b>');
    // The agent by its name, not only its id.
    expect(await page.locator('main').textContent()).toContain(`Test agent (${env.org.agentId})`);
    // The provider carrying the call, and its own id for it.
    expect(await page.locator('main').textContent()).toMatch(
      /Provider\s*simulator\s*Provider call id\s*sim_[0-9a-f]{16}/,
    );
    await expectAccessible(page);

    // A page past the last (an old link) says so and leads back to the last page.
    await page.goto(`${env.app.baseUrl}/dashboard/calls?status=queued&page=5`);
    const pages = page.getByRole('navigation', { name: 'Pages' });
    expect(await pages.textContent()).toContain('Page 5 is past the last page, 1 (1 in all)');
    await pages.getByRole('link', { name: 'Previous page' }).click();
    await expect.poll(() => pages.textContent()).toContain('Page 1 of 1');
    await page.getByRole('link', { name: callId }).waitFor();
    await page.context().close();
  });

  it('imports a CSV with a per-row report and shows hostile contact names as text, raising no dialog', async () => {
    const hostile = '<script>alert(1)</script>';
    const upserted = await rawRequest(env.app, 'POST', '/contacts', {
      headers: { Authorization: `Bearer ${env.org.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        phone_e164: testNumber('1111'),
        name: hostile,
        consent_capture: 'manual',
        metadata: { x: '"><img src=x onerror=alert(2)>' },
      }),
    });
    expect(upserted.status).toBeLessThan(300);
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const dialogs = collectDialogs(page);
    await page.getByRole('link', { name: 'Contacts' }).click();
    await page.getByRole('heading', { name: 'Contacts', exact: true }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: hostile }).count()).toBe(1);
    await expectAccessible(page);

    const csv = `phone_e164,name\n${testNumber('2222')},Asha\nnot-a-number,Bad row\n`;
    await page.getByLabel('CSV contents').fill(csv);
    await page.getByRole('button', { name: 'Import contacts' }).click();
    const report = page.locator('.notice');
    await expect.poll(() => report.textContent()).toMatch(/2 rows read, 1 created, 0 updated,\s+1 rejected/);
    expect(await page.getByRole('row').filter({ hasText: 'phone_e164' }).first().textContent()).toContain('3');
    await page.getByLabel('Consent').selectOption('imported');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Asha' }).count()).toBe(1);
    expect(await page.getByRole('row').filter({ hasText: hostile }).count()).toBe(0);
    expect(dialogs).toEqual([]);
    await page.context().close();
  });

  it('pages through contacts without counting them all: a next page while more follow, none after the last', async () => {
    const rows = Array.from({ length: 55 }, (_, i) => `${testNumber(String(5000 + i))},Bulk ${i}`);
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.getByRole('link', { name: 'Contacts' }).click();
    await page.getByLabel('CSV contents').fill(`phone_e164,name\n${rows.join('\n')}\n`);
    await page.getByRole('button', { name: 'Import contacts' }).click();
    await expect.poll(() => page.locator('.notice').textContent()).toMatch(/55 rows read, 55 created/);
    await page.goto(`${env.app.baseUrl}/dashboard/contacts`);
    const pages = page.getByRole('navigation', { name: 'Pages' });
    expect(await pages.textContent()).toContain('Page 1');
    expect(await pages.getByRole('link', { name: 'Previous page' }).count()).toBe(0);
    await pages.getByRole('link', { name: 'Next page' }).click();
    await expect.poll(() => pages.textContent()).toContain('Page 2');
    expect(await pages.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    expect(await pages.getByRole('link', { name: 'Previous page' }).count()).toBe(1);
    // The oldest contact, made first, is on the last page.
    expect(await page.getByRole('row').filter({ hasText: '<script>alert(1)</script>' }).count()).toBe(1);
    await expectAccessible(page);
    // A page past the end (an old link) says so and leads back to the first.
    await page.goto(`${env.app.baseUrl}/dashboard/contacts?page=9`);
    expect(await pages.textContent()).toContain('Page 9 is past the end of the list');
    expect(await pages.getByRole('link', { name: 'Previous page' }).count()).toBe(0);
    await pages.getByRole('link', { name: 'First page' }).click();
    await expect.poll(() => pages.textContent()).toContain('Page 1');
    expect(await pages.getByRole('link', { name: 'Next page' }).count()).toBe(1);
    await page.context().close();
  });

  it('loads every page from its own origin alone, with under 200 KB of script and style', async () => {
    const endpoint = await insertWebhook(env.database.db, {
      orgId: env.org.orgId,
      url: 'https://receiver.test/weights',
      events: ['contact.created'],
      secret: `whsec_${randomUUID()}`,
      now: new Date(),
    });
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const origin = new URL(env.app.baseUrl).origin;
    const paths = [
      '/dashboard',
      '/dashboard/keys',
      '/dashboard/webhooks',
      `/dashboard/webhooks/${endpoint.id}`,
      '/dashboard/calls',
      `/dashboard/calls/${callId}`,
      '/dashboard/contacts',
      '/dashboard/members',
      '/dashboard/audit',
      '/dashboard/login',
    ];
    const weights: string[] = [];
    for (const path of paths) {
      const requested: string[] = [];
      const onRequest = (request: { url(): string }) => requested.push(request.url());
      page.on('request', onRequest);
      await page.goto(path, { waitUntil: 'networkidle' });
      page.off('request', onRequest);
      // What the page's scripts and style sheets weigh decoded, whether fetched or taken from the cache.
      const scriptAndStyle = await page.evaluate(() =>
        performance
          .getEntriesByType('resource')
          .filter((entry) => ['script', 'link', 'css'].includes((entry as PerformanceResourceTiming).initiatorType))
          .reduce((sum, entry) => sum + (entry as PerformanceResourceTiming).decodedBodySize, 0),
      );
      expect(
        requested.filter((url) => new URL(url).origin !== origin),
        path,
      ).toEqual([]);
      expect(scriptAndStyle, path).toBeGreaterThan(0);
      expect(scriptAndStyle, path).toBeLessThan(200 * 1024);
      weights.push(`${path.replace(/[0-9a-f-]{36}/, '{id}')} ${(scriptAndStyle / 1024).toFixed(1)} KiB`);
    }
    console.log(`dashboard script and style per page: ${weights.join('; ')}`);
    await page.context().close();
  });

  it('invites a member by link, lists the audit log, and removing the member ends their session', async () => {
    const admin = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await admin.getByRole('link', { name: 'Members' }).click();
    await admin.getByRole('heading', { name: 'Members' }).waitFor();
    await expectAccessible(admin);
    await admin.getByLabel('Email').fill('newcomer@example.com');
    await admin.getByLabel('Role').selectOption('viewer');
    await admin.getByRole('button', { name: 'Invite member' }).click();
    const link = (await admin.locator('#member-link').textContent())!.trim();
    expect(link).toMatch(/\/dashboard\/invite\/[A-Za-z0-9_-]{43}$/);

    // Inviting the same address again is refused under the email field, the form kept as sent.
    await admin.getByLabel('Email').fill('NewComer@example.com');
    await admin.getByLabel('Role').selectOption('admin');
    await admin.getByRole('button', { name: 'Invite member' }).click();
    await expect.poll(() => admin.getByRole('alert').textContent()).toContain('Nobody was invited');
    const email = admin.getByLabel('Email');
    expect(await email.getAttribute('aria-invalid')).toBe('true');
    expect(await email.getAttribute('aria-describedby')).toBe('email-error');
    expect(await admin.locator('#email-error').textContent()).toContain('is already a member of this organisation');
    expect(await email.inputValue()).toBe('NewComer@example.com');
    expect(await admin.getByLabel('Role').inputValue()).toBe('admin');
    await expectAccessible(admin);

    const viewer = await acceptInvite(await newContext(browser, env.app.baseUrl), link);
    await viewer.goto('/dashboard/members');
    expect(await viewer.getByRole('button', { name: 'Invite member' }).count()).toBe(0);

    // Made an admin, the member can change things from their next page on; made a viewer again, no more.
    await admin.getByRole('link', { name: 'Members' }).click();
    await admin.getByRole('link', { name: 'Make admin, newcomer@example.com' }).click();
    await admin.getByRole('heading', { name: 'Make admin' }).waitFor();
    await expectAccessible(admin);
    await admin.getByRole('button', { name: 'Make admin' }).click();
    await expect.poll(() => admin.getByRole('status').textContent()).toContain('newcomer@example.com is now an admin.');
    expect(await admin.getByRole('row').filter({ hasText: 'newcomer@example.com' }).textContent()).toContain('admin');
    await viewer.reload();
    expect(await viewer.getByRole('button', { name: 'Invite member' }).count()).toBe(1);
    // Sending the same form again changes nothing more, and says so.
    await admin.reload();
    await expect.poll(() => admin.getByRole('status').textContent()).toContain('was already an admin.');
    await admin.getByRole('link', { name: 'Members' }).click();
    await admin.getByRole('link', { name: 'Make viewer, newcomer@example.com' }).click();
    await admin.getByRole('button', { name: 'Make viewer' }).click();
    await expect.poll(() => admin.getByRole('status').textContent()).toContain('newcomer@example.com is now a viewer.');
    await viewer.reload();
    expect(await viewer.getByRole('button', { name: 'Invite member' }).count()).toBe(0);
    // An admin cannot change their own role here (another admin can), so an org never loses its last one.
    expect(await admin.getByRole('row').filter({ hasText: 'You' }).getByRole('link').count()).toBe(0);
    await admin.getByRole('link', { name: 'Remove newcomer@example.com' }).click();
    await expectAccessible(admin);
    await admin.getByRole('button', { name: 'Remove member' }).click();
    await admin.getByRole('heading', { name: 'Members' }).waitFor();
    await viewer.reload();
    await viewer.getByRole('heading', { name: 'Sign in' }).waitFor();

    await admin.getByRole('link', { name: 'Audit log' }).click();
    await admin.getByRole('heading', { name: 'Audit log' }).waitFor();
    const text = (await admin.locator('table').textContent())!;
    for (const action of [
      'member.invited (viewer)',
      'member.role_changed (admin)',
      'member.role_changed (viewer)',
      'member.password_set',
      'member.removed',
      'sign_in',
    ]) {
      expect(text).toContain(action);
    }
    // Setting the password through the link names the address it came from, as a sign-in does.
    const passwordSet = await env.database.db
      .selectFrom('audit_log')
      .select('address')
      .where('actor', '=', 'newcomer@example.com')
      .where('action', '=', 'member.password_set')
      .executeTakeFirstOrThrow();
    expect(passwordSet.address).toBe('127.0.0.1');
    await expectAccessible(admin);
    await admin.context().close();
    await viewer.context().close();
  });
});

describe('who may do what', { timeout: 120_000 }, () => {
  it('shows a viewer no controls and refuses their forced changes with 403, changing nothing', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'viewer');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create API key' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: /Revoke/ }).count()).toBe(0);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    expect(await page.getByRole('button', { name: 'Add endpoint' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Contacts' }).click();
    expect(await page.getByRole('button', { name: 'Import contacts' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Members' }).click();
    expect(await page.getByRole('button', { name: 'Invite member' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await expectAccessible(page);

    const keysBefore = await env.database.db.selectFrom('api_keys').select('id').execute();
    const csrf = await csrfOf(page);
    const origin = env.app.baseUrl;
    for (const path of ['/dashboard/keys', '/dashboard/members', '/dashboard/contacts/import', '/dashboard/webhooks']) {
      const forced = await page.request.post(`${origin}${path}`, {
        form: {
          _csrf: csrf,
          label: 'forced',
          email: 'x@example.com',
          role: 'admin',
          csv: 'phone_e164\n+919812345678\n',
          url: 'https://example.com/h',
          events: 'call.completed',
        },
        headers: { Origin: origin },
        maxRedirects: 0,
      });
      expect(forced.status(), path).toBe(403);
    }
    expect((await page.request.get(`${origin}/dashboard/audit`)).status()).toBe(403);
    expect(await env.database.db.selectFrom('api_keys').select('id').execute()).toHaveLength(keysBefore.length);
    await page.context().close();
  });

  it("answers another org's session with 404 for this org's endpoint and call pages", async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, other.orgId, 'admin');
    const own = await page.goto(`/dashboard/webhooks/${other.webhookId}`);
    expect(own!.status()).toBe(200);
    const { id: foreignEndpoint } = await env.database.db
      .insertInto('webhooks')
      .values({
        org_id: env.org.orgId,
        url: 'https://receiver.test/a',
        events: ['call.completed'],
        secret: 'x'.repeat(64),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    for (const path of [
      `/dashboard/webhooks/${foreignEndpoint}`,
      `/dashboard/calls/${callId}`,
      '/dashboard/calls/not-a-uuid',
    ]) {
      const response = await page.goto(path);
      expect(response!.status(), path).toBe(404);
    }
    const csrf = await csrfOf(page);
    const forced = await page.request.post(`${env.app.baseUrl}/dashboard/webhooks/${foreignEndpoint}/delete`, {
      form: { _csrf: csrf },
      headers: { Origin: env.app.baseUrl },
      maxRedirects: 0,
    });
    expect(forced.status()).toBe(404);
    expect(
      await env.database.db.selectFrom('webhooks').select('id').where('id', '=', foreignEndpoint).execute(),
    ).toHaveLength(1);
    await page.context().close();
  });

  it('refuses a cross-site form post with 403 and changes nothing', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const csrf = await csrfOf(page);
    const keysBefore = await env.database.db.selectFrom('api_keys').select('id').execute();
    // localhost is another site than 127.0.0.1: the page there posts a form to the dashboard.
    const attacker: Server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(`<!doctype html><form id="f" method="post" action="${env.app.baseUrl}/dashboard/keys">
<input name="_csrf" value="${csrf}"><input name="label" value="evil"></form>
<script>document.getElementById('f').submit()</script>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      const port = (attacker.address() as { port: number }).port;
      const answered = page.waitForResponse(
        (response) => response.url().endsWith('/dashboard/keys') && response.request().method() === 'POST',
      );
      await page.goto(`http://localhost:${port}/`);
      expect((await answered).status()).toBe(403);
      expect(await env.database.db.selectFrom('api_keys').select('id').execute()).toHaveLength(keysBefore.length);

      // The same post with the session cookie but no Origin or Referer is refused too.
      const bare = await page.request.post(`${env.app.baseUrl}/dashboard/keys`, {
        form: { _csrf: csrf, label: 'x' },
        maxRedirects: 0,
      });
      expect(bare.status()).toBe(403);
      const wrongToken = await page.request.post(`${env.app.baseUrl}/dashboard/keys`, {
        form: { _csrf: 'x'.repeat(43), label: 'x' },
        headers: { Origin: env.app.baseUrl },
        maxRedirects: 0,
      });
      expect(wrongToken.status()).toBe(403);
      expect(await env.database.db.selectFrom('api_keys').select('id').execute()).toHaveLength(keysBefore.length);
    } finally {
      await new Promise((resolve) => attacker.close(resolve));
      await page.context().close();
    }
  });
});

describe('what a browser trial found', { timeout: 120_000 }, () => {
  it('keeps hostile direction controls and unbroken strings inside their place', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const spoof = `evil\u202Etxt.exe`;
    const long = 'x'.repeat(200);
    for (const [phone, name] of [
      [testNumber('5101'), spoof],
      [testNumber('5102'), long],
    ] as const) {
      const stored = await rawRequest(env.app, 'POST', '/contacts', {
        headers: { Authorization: `Bearer ${env.org.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ phone_e164: phone, name, consent_capture: 'manual' }),
      });
      expect(stored.status).toBe(201);
    }
    await page.goto(`${env.app.baseUrl}/dashboard/contacts`);
    // In a cell of its own, the override shown as its code point rather than acting (stored as sent).
    expect(await page.getByRole('cell', { name: 'evil<U+202E>txt.exe', exact: true }).count()).toBe(1);
    // Where user text sits inside a sentence, an isolating element around it ends what it starts, so
    // it cannot reverse the words after it (even with a closing U+2069 of its own).
    const label = `\u2069${spoof}`;
    await page.goto(`${env.app.baseUrl}/dashboard/keys`);
    await page.getByLabel('Label (optional)').fill(label);
    await page.getByRole('button', { name: 'Create API key' }).click();
    const prefix = (await page.locator('#new-key').textContent())!.trim().split('_')[2]!;
    await page.goto(`${env.app.baseUrl}/dashboard/keys/${prefix}/revoke`);
    const isolation = await page.evaluate((text) => {
      const holder = [...document.querySelectorAll('main p *')].find((element) => element.textContent === text);
      return holder ? getComputedStyle(holder).unicodeBidi : 'not found';
    }, '<U+2069>evil<U+202E>txt.exe');
    expect(isolation).toBe('isolate');
    for (const selector of ['header .who bdi', 'main code', 'main a']) {
      const style = await page.evaluate((query) => {
        const element = document.querySelector(query);
        return element ? getComputedStyle(element).unicodeBidi : 'not found';
      }, selector);
      expect(style, selector).toBe('isolate');
    }
    await page.goto(`${env.app.baseUrl}/dashboard/contacts`);
    expect(await page.getByRole('cell', { name: long }).count()).toBe(1);
    // A 200-character word wraps in its cell instead of widening the page past the window.
    const { scrolled, window: width } = await page.evaluate(() => ({
      scrolled: document.documentElement.scrollWidth,
      window: window.innerWidth,
    }));
    expect(scrolled).toBeLessThanOrEqual(width);
    await page.context().close();
  });

  it('moves the focus to a form error and keeps what was chosen and typed', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.goto(`${env.app.baseUrl}/dashboard/members`);
    await page.getByLabel('Email').fill('not-an-address');
    await page.getByLabel('Role').selectOption('viewer');
    await page
      .locator('form[action="/dashboard/members"]')
      .evaluate((form: HTMLFormElement) => (form.noValidate = true));
    await page.getByRole('button', { name: 'Invite member' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByLabel('Role').inputValue()).toBe('viewer');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('alert');
    await expectAccessible(page);

    await page.goto(`${env.app.baseUrl}/dashboard/contacts`);
    // A direction control in the text comes back as it was sent.
    const broken = 'phone_e164,colour\n+919800000001,\u202Eblue';
    await page.getByLabel('CSV contents').fill(broken);
    await page.getByRole('button', { name: 'Import contacts' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('unknown column(s) colour');
    expect(await page.getByLabel('CSV contents').inputValue()).toBe(broken);
    await page.context().close();
  });

  it('says a key is already revoked, confirms a test send, refuses a page past the furthest, and offers a skip link', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.goto(`${env.app.baseUrl}/dashboard/keys`);
    await page.getByLabel('Label (optional)').fill('Short-lived');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const prefix = (await page.locator('#new-key').textContent())!.trim().split('_')[2]!;
    await page.goto(`${env.app.baseUrl}/dashboard/keys/${prefix}/revoke`);
    await page.getByRole('button', { name: 'Revoke key' }).click();
    const again = await page.goto(`${env.app.baseUrl}/dashboard/keys/${prefix}/revoke`);
    expect(again!.status()).toBe(409);
    expect(await page.getByRole('alert').textContent()).toContain('This key was already revoked');

    const receiver = await startReceiver(answer(204));
    const { id } = await register(env, receiver.url);
    await page.goto(`${env.app.baseUrl}/dashboard/webhooks/${id}`);
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Test event sent');
    await expectAccessible(page);
    expect(receiver.requests).toHaveLength(1);
    await receiver.close();
    // Only the notices the dashboard itself sends are shown, and only to the session whose change it was:
    // the same address, or one with the seal taken off, says nothing in another session or out of place.
    const sealed = page.url();
    expect(sealed).toMatch(/\?done=test\.[\w-]{22}$/);
    await page.goto(`${env.app.baseUrl}/dashboard/webhooks/${id}?done=constructor`);
    expect(await page.getByRole('status').count()).toBe(0);
    await page.goto(`${env.app.baseUrl}/dashboard/webhooks/${id}?done=test`);
    expect(await page.getByRole('status').count()).toBe(0);
    const other = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await other.goto(sealed);
    await other.getByRole('heading', { name: 'Webhook endpoint' }).waitFor();
    expect(await other.getByRole('status').count()).toBe(0);
    await other.context().close();
    await page.goto(sealed);
    expect(await page.getByRole('status').textContent()).toContain('Test event sent');

    const far = await page.goto(`${env.app.baseUrl}/dashboard/calls?page=500`);
    expect(far!.status()).toBe(400);
    expect(await page.getByRole('alert').textContent()).toContain('Lists go to page 200 at most');

    // A list longer than its furthest page says, on that page, where it stops and how to go on.
    const long = await createTestOrg(env.database.db);
    await sql`INSERT INTO contacts (org_id, phone_e164, consent_capture)
      SELECT ${long.orgId}, '+9190' || lpad(n::text, 8, '0'), 'imported' FROM generate_series(1, 10050) AS n`.execute(
      env.database.db,
    );
    const longPage = await signedInPage(browser, env.app.baseUrl, env.database.db, long.orgId, 'viewer');
    await longPage.goto('/dashboard/contacts?page=200');
    const pages = longPage.locator('nav[aria-label="Pages"]');
    expect(await pages.textContent()).toContain(
      'Page 200 (the list stops at page 200: choose a filter to find the rest)',
    );
    expect(await pages.getByRole('link', { name: 'Next page' }).count()).toBe(0);
    await longPage.goto('/dashboard/contacts?page=199');
    expect(await pages.textContent()).not.toContain('stops');
    await longPage.context().close();

    await page.goto(`${env.app.baseUrl}/dashboard`);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('MAIN');
    await page.context().close();
  });
});

describe('resetting a password', { timeout: 60_000 }, () => {
  it('asks first, then shows the one-time link once', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const email = `reset-${randomUUID()}@example.com`;
    await invite(env.database.db, env.org.orgId, email, 'viewer');
    await page.goto(`${env.app.baseUrl}/dashboard/members`);
    await page.getByRole('link', { name: `Reset password of ${email}` }).click();
    await page.getByRole('heading', { name: 'Reset password' }).waitFor();
    expect(await page.locator('main').textContent()).toContain(`Reset the password of ${email}?`);
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Reset password' }).click();
    await page.getByRole('heading', { name: 'Members' }).waitFor();
    expect(await page.locator('main').textContent()).toMatch(/\/dashboard\/invite\/[A-Za-z0-9_-]{43}/);
    expect((await page.reload())!.status()).toBe(409);
    await page.context().close();
  });
});
