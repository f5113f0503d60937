// Choosing a password from a one-time link, in Chromium: a common or breached-style password is refused
// with the reason on the form (which passes axe), the link keeps working, and a hard one is accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { expectAccessible, invite, launchBrowser, newContext, PASSWORD } from './support/dashboard.js';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;
let browser: Browser;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  org = await createTestOrg(database.db);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await database?.drop();
});

describe('setting a password', { timeout: 120_000 }, () => {
  it('refuses common and breached-style passwords and says why, then takes a hard one', async () => {
    const link = await invite(database.db, org.orgId, 'chooser@example.com', 'admin');
    const page = await (await newContext(browser, app.baseUrl)).newPage();
    await page.goto(link);
    await expect(page.getByText('common and breached passwords').count()).resolves.toBe(1);

    for (const weak of ['password1234', 'qwertyuiop123']) {
      await page.getByLabel('New password').fill(weak);
      const [response] = await Promise.all([
        page.waitForResponse((answer) => answer.request().method() === 'POST'),
        page.getByRole('button', { name: 'Set password and sign in' }).click(),
      ]);
      expect(response.status()).toBe(400);
      await page.getByRole('heading', { name: 'Set your password' }).waitFor();
      expect(await page.getByRole('alert').innerText()).toContain('The password was not set');
      // The reason is written under the field, which names it after the rules it broke.
      const field = page.getByLabel('New password');
      expect(await field.getAttribute('aria-invalid')).toBe('true');
      expect(await field.getAttribute('aria-describedby')).toBe('password-help password-error');
      const error = await page.locator('#password-error').innerText();
      expect(error).toContain('is too easy to guess.');
      expect(error).toContain('This is similar to a commonly used password.');
    }
    await expectAccessible(page);
    const unset = await database.db
      .selectFrom('dashboard_users')
      .select('password_hash')
      .where('email', '=', 'chooser@example.com')
      .executeTakeFirstOrThrow();
    expect(unset.password_hash).toBeNull();

    await page.getByLabel('New password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  });

  it('refuses a password built on the email address it is for', async () => {
    const link = await invite(database.db, org.orgId, 'admin2@x.example', 'admin');
    const page = await (await newContext(browser, app.baseUrl)).newPage();
    await page.goto(link);
    for (const built of ['admin2x.example!!', 'Admin2-X.Example-2026']) {
      await page.getByLabel('New password').fill(built);
      const [response] = await Promise.all([
        page.waitForResponse((answer) => answer.request().method() === 'POST'),
        page.getByRole('button', { name: 'Set password and sign in' }).click(),
      ]);
      expect(response.status(), built).toBe(400);
      await page.getByRole('heading', { name: 'Set your password' }).waitFor();
      expect(await page.locator('#password-error').innerText(), built).toContain('It is built on your email address');
    }
    const unset = await database.db
      .selectFrom('dashboard_users')
      .select('password_hash')
      .where('email', '=', 'admin2@x.example')
      .executeTakeFirstOrThrow();
    expect(unset.password_hash).toBeNull();
    await page.context().close();
  });
});
