// One address in several orgs, in Chromium: an admin inviting an address that belongs to someone in
// another org gets the same answer as for a fresh address (no one learns it exists elsewhere or squats
// it), the invitee sets that membership's own password, and each password signs in to its own org.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp } from './support/app.js';
import { acceptInvite, expectAccessible, invite, launchBrowser, newContext, PASSWORD } from './support/dashboard.js';

const OTHER_PASSWORD = 'a different passphrase for the second org';

let database: TestDatabase;
let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  database = await createTestDatabase();
  app = await startTestApp(database, { workers: false });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await database?.drop();
});

async function orgName(orgId: string): Promise<string> {
  const row = await database.db.selectFrom('orgs').select('name').where('id', '=', orgId).executeTakeFirstOrThrow();
  return row.name;
}

/** Invites `email` as a viewer from the members page; the answer's status and its message, emails masked. */
async function inviteFromPage(page: Page, email: string): Promise<{ status: number; message: string; link: string }> {
  await page.goto('/dashboard/members');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Role').selectOption('viewer');
  const [response] = await Promise.all([
    page.waitForResponse((answer) => answer.request().method() === 'POST'),
    page.getByRole('button', { name: 'Invite member' }).click(),
  ]);
  await page.getByRole('heading', { name: 'Members' }).waitFor();
  const message = (await page.locator('.notice').first().innerText()).replaceAll(email, 'EMAIL');
  const link = (await page.locator('#member-link').count()) > 0 ? await page.locator('#member-link').innerText() : '';
  return { status: response.status(), message, link };
}

async function signIn(email: string, password: string): Promise<Page> {
  const page = await (await newContext(browser, app.baseUrl)).newPage();
  await page.goto('/dashboard/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return page;
}

describe('an address in several orgs', { timeout: 180_000 }, () => {
  it('is invited like a fresh address, and each membership signs in with its own password', async () => {
    const [first, second] = [await createTestOrg(database.db), await createTestOrg(database.db)];
    // Someone already uses the dashboard of the first org.
    await acceptInvite(
      await newContext(browser, app.baseUrl),
      await invite(database.db, first.orgId, 'kim@example.com', 'admin'),
    );
    // The second org's admin invites that address, and an address no one has.
    const admin = await acceptInvite(
      await newContext(browser, app.baseUrl),
      await invite(database.db, second.orgId, 'second-admin@example.com', 'admin'),
    );
    const taken = await inviteFromPage(admin, 'kim@example.com');
    const fresh = await inviteFromPage(admin, 'nobody-yet@example.com');
    expect(taken.status).toBe(201);
    expect({ status: taken.status, message: taken.message.replace(/\/invite\/\S+/, '') }).toEqual({
      status: fresh.status,
      message: fresh.message.replace(/\/invite\/\S+/, ''),
    });
    await expectAccessible(admin);
    const members = await admin.getByRole('table').innerText();
    expect(members).toContain('kim@example.com');

    // Kim sets the second membership's own password through its link.
    const context = await newContext(browser, app.baseUrl);
    const linkPage = await context.newPage();
    await linkPage.goto(new URL(taken.link).pathname);
    await linkPage.getByLabel('New password').fill(OTHER_PASSWORD);
    await linkPage.getByRole('button', { name: 'Set password and sign in' }).click();
    await linkPage.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await linkPage.locator('.who').innerText()).toContain(await orgName(second.orgId));

    // Each password signs in to its own org.
    const inFirst = await signIn('kim@example.com', PASSWORD);
    expect(await inFirst.locator('.who').innerText()).toContain(
      `${await orgName(first.orgId)} · kim@example.com (admin)`,
    );
    const inSecond = await signIn('kim@example.com', OTHER_PASSWORD);
    expect(await inSecond.locator('.who').innerText()).toContain(
      `${await orgName(second.orgId)} · kim@example.com (viewer)`,
    );
  });
});
