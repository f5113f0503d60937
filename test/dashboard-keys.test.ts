// The dashboard in Chromium: invite → set password → sign in, then API keys: create one from the
// keyboard, use it against the API, see it masked, revoke it and see the API refuse it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, rawRequest, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import {
  acceptInvite,
  expectAccessible,
  invite,
  launchBrowser,
  newContext,
  PASSWORD,
  signedInPage,
} from './support/dashboard.js';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;
let browser: Browser;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false, config: { apiKeyCacheTtlMs: 0 } });
  org = await createTestOrg(database.db);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await database?.drop();
});

describe('signing in', { timeout: 60_000 }, () => {
  it('sets a password from an invite link once, then signs in with it and out again', async () => {
    const context = await newContext(browser, app.baseUrl);
    const link = await invite(database.db, org.orgId, 'Owner@Example.com', 'admin');
    const page = await acceptInvite(context, link);
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    await expectAccessible(page);
    const again = await page.goto(link);
    expect(again!.status()).toBe(404);

    await page.goto('/dashboard/login');
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill('not the password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('not right');

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    const cookie = (await context.cookies()).find((entry) => entry.name === 'dashboard_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/dashboard', secure: false });
    await context.close();
  });
});

describe('API keys', { timeout: 90_000 }, () => {
  it('creates a key from the keyboard alone, shows it once, then only masked; revoking it makes the API refuse it', async () => {
    const page = await signedInPage(browser, app.baseUrl, database.db, org.orgId, 'admin');
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await expectAccessible(page);

    // Keyboard only: Tab from the top of the page to the label field, type, Tab to the button, Enter.
    const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');
    for (let presses = 0; (await focusedId()) !== 'label'; presses += 1) {
      expect(presses, 'Tab never reached the label field').toBeLessThan(40);
      await page.keyboard.press('Tab');
    }
    await page.keyboard.type('Production server');
    await page.keyboard.press('Tab');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Create API key');
    await page.keyboard.press('Enter');
    const shown = page.locator('#new-key');
    await shown.waitFor();
    const key = (await shown.textContent())!.trim();
    expect(key).toMatch(/^svc_live_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
    await expectAccessible(page);
    const prefix = key.split('_')[2]!;

    const used = await rawRequest(app, 'GET', '/contacts', { headers: { Authorization: `Bearer ${key}` } });
    expect(used.status).toBe(200);
    await expect
      .poll(
        async () =>
          (
            await database.db
              .selectFrom('api_keys')
              .select('last_used_at')
              .where('prefix', '=', prefix)
              .executeTakeFirstOrThrow()
          ).last_used_at,
      )
      .not.toBeNull();

    await page.getByRole('link', { name: 'API keys' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Production server' });
    await expect.poll(() => row.textContent()).toContain(`svc_live_${prefix}_…`);
    expect(await row.textContent()).toContain('Active');
    expect(await row.textContent()).not.toContain('Never');
    expect(await page.content()).not.toContain(key);

    await row.getByRole('link', { name: /Revoke/ }).click();
    await page.getByRole('heading', { name: 'Revoke API key' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await expect
      .poll(() => page.getByRole('row').filter({ hasText: 'Production server' }).textContent())
      .toContain('Revoked');
    const refused = await rawRequest(app, 'GET', '/contacts', { headers: { Authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);

    const audit = await database.db
      .selectFrom('audit_log')
      .select(['action', 'address'])
      .where('org_id', '=', org.orgId)
      .execute();
    expect(audit.map((entry) => entry.action)).toEqual(
      expect.arrayContaining(['api_key.created', 'api_key.revoked', 'sign_in']),
    );
    await page.context().close();
  });

  it('does not make a second key, or show one again, when the page that showed a new key is reloaded', async () => {
    const other = await createTestOrg(database.db);
    const page = await signedInPage(browser, app.baseUrl, database.db, other.orgId, 'admin');
    const keysOf = async () =>
      (await database.db.selectFrom('api_keys').select('prefix').where('org_id', '=', other.orgId).execute()).length;
    const before = await keysOf();
    await page.goto('/dashboard/keys');
    await page.getByLabel('Label (optional)').fill('Reloaded');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const key = (await page.locator('#new-key').textContent())!.trim();
    expect(await keysOf()).toBe(before + 1);

    // The browser sends the same form again: nothing more is made, and the key is not shown again.
    const again = await page.reload();
    expect(again!.status()).toBe(409);
    await page.getByRole('heading', { name: 'Not possible now' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain(
      'This form was already sent, so it was not done again',
    );
    expect(await page.content()).not.toContain(key);
    await expectAccessible(page);
    expect(await keysOf()).toBe(before + 1);

    // A form the server refused (a label over its limit) may be sent again with the same nonce, once put right.
    await page.goto('/dashboard/keys');
    const form = page.locator('form[action="/dashboard/keys"]');
    const hidden = async (name: string) => (await form.locator(`input[name="${name}"]`).getAttribute('value'))!;
    const base = { _csrf: await hidden('_csrf'), _once: await hidden('_once') };
    const cookie = (await page.context().cookies()).map((entry) => `${entry.name}=${entry.value}`).join('; ');
    const send = (label: string) =>
      fetch(`${app.baseUrl}/dashboard/keys`, {
        method: 'POST',
        headers: { Cookie: cookie, Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...base, label }).toString(),
      });
    // A nonce this server could not have made is refused before anything is stored.
    const forged = await fetch(`${app.baseUrl}/dashboard/keys`, {
      method: 'POST',
      headers: { Cookie: cookie, Origin: app.baseUrl, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...base, _once: 'n'.repeat(100_000), label: 'Forged' }).toString(),
    });
    expect(forged.status).toBe(400);
    const refused = await send('x'.repeat(300));
    expect(refused.status).toBe(400);
    // The form comes back with the label as sent and the error under it, tied to the field.
    const refusedPage = await refused.text();
    expect(refusedPage).toContain('No key was created');
    expect(refusedPage).toMatch(/id="label"[^>]*value="x{300}"/);
    expect(refusedPage).toMatch(/aria-describedby="label-help label-error"\s+aria-invalid="true"/);
    expect(refusedPage).toContain('<p id="label-error" class="field-error">');
    expect((await send('Put right')).status).toBe(201);
    expect((await send('Put right')).status).toBe(409);
    expect(await keysOf()).toBe(before + 2);
    await page.context().close();
  });

  it('answers every dashboard page with no-store, a strict CSP, no referrer to other sites', async () => {
    const response = await fetch(`${app.baseUrl}/dashboard/login`);
    expect(response.status).toBe(200);
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(response.headers.get('referrer-policy')).toBe('same-origin');
    const unknown = await fetch(`${app.baseUrl}/dashboard/nothing/here`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^text\/html/);
    const anonymous = await fetch(`${app.baseUrl}/dashboard/keys`, { redirect: 'manual' });
    expect(anonymous.status).toBe(302);
    // The sign-in page is told where to return to.
    expect(anonymous.headers.get('location')).toBe('/dashboard/login?next=%2Fdashboard%2Fkeys');
  });
});
