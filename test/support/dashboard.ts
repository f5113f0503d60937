// Driving the dashboard in headless Chromium (Debian's /usr/bin/chromium through playwright-core, as
// the docs test does): signing people in through their invite links, and axe-core's check of a page.
import path from 'node:path';
import { expect } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../scripts/chromium.js';
import type { Db } from '../../src/database/connect.js';
import { inviteMember, linkPath, type Role } from '../../src/members/service.js';
import { setPasswordHash } from '../../src/members/queries.js';
import { hashPassword } from '../../src/members/passwords.js';
import { startSession } from '../../src/members/sessions.js';
import { SESSION_COOKIE } from '../../src/dashboard/cookies.js';
import type { AxeResults } from 'axe-core';

const AXE = path.resolve('node_modules/axe-core/axe.min.js');

/** A password long enough for the dashboard. */
export const PASSWORD = 'correct horse battery staple';

/** The CSRF token in a dashboard page's forms, for a test that posts one over plain HTTP. */
export function csrfTokenOf(page: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(page);
  if (!match) throw new Error('the page has no CSRF field');
  return match[1]!;
}

/** Starts headless Chromium. */
export function launchBrowser(): Promise<Browser> {
  return launchChromium();
}

/**
 * A browser context for `baseUrl`. `bypassCSP` lets axe-core be injected into the page (the dashboard's
 * CSP refuses inline scripts, as it should); tests of the CSP itself use a context without it.
 */
export function newContext(
  browser: Browser,
  baseUrl: string,
  options: { bypassCSP?: boolean } = {},
): Promise<BrowserContext> {
  return browser.newContext({ baseURL: baseUrl, bypassCSP: options.bypassCSP ?? true });
}

/** Invites `email` into the org (as the CLI does) and returns the invite link's path. */
export async function invite(db: Db, orgId: string, email: string, role: Role): Promise<string> {
  const { token } = await inviteMember(db, { orgId, email, role }, { actor: 'cli', address: null });
  return linkPath(token);
}

/** Opens an invite link in a new page, sets the password and returns the page, signed in on the overview. */
export async function acceptInvite(context: BrowserContext, link: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(link);
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return page;
}

// One hash of PASSWORD per test process, shared by the members signedInPage makes.
let passwordHash: Promise<string> | undefined;

/**
 * A new signed-in page, on the overview, for a new member of the org whose password is PASSWORD. The
 * session is started here rather than through the invite form, whose password hash runs on a low-priority
 * thread and may wait long on a crowded machine; the tests of that form use `acceptInvite`.
 */
export async function signedInPage(
  browser: Browser,
  baseUrl: string,
  db: Db,
  orgId: string,
  role: Role,
): Promise<Page> {
  const email = `${role}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const { user } = await inviteMember(db, { orgId, email, role }, { actor: 'cli', address: null });
  passwordHash ??= hashPassword(PASSWORD);
  await setPasswordHash(db, user.id, await passwordHash);
  const lifetimes = { idleMs: 60 * 60_000, absoluteMs: 24 * 60 * 60_000 };
  const { token } = await startSession(db, user, lifetimes, new Date(), null);
  const context = await newContext(browser, baseUrl);
  await context.addCookies([
    { name: SESSION_COOKIE, value: token, domain: new URL(baseUrl).hostname, path: '/dashboard', httpOnly: true },
  ]);
  const page = await context.newPage();
  await page.goto('/dashboard');
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  return page;
}

/**
 * Runs axe-core on the page and fails on any serious or critical violation, naming them; `alsoRules`
 * turns on rules axe leaves off by default (such as `target-size`).
 */
export async function expectAccessible(page: Page, options: { alsoRules?: string[] } = {}): Promise<void> {
  await page.addScriptTag({ path: AXE });
  const rules = Object.fromEntries((options.alsoRules ?? []).map((rule) => [rule, { enabled: true }]));
  const violations = await page.evaluate(async (rules) => {
    const axe = (globalThis as unknown as { axe: { run(options: object): Promise<AxeResults> } }).axe;
    const result = await axe.run({ rules });
    return result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map(
        (violation) =>
          `${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`,
      );
  }, rules);
  expect(violations, `axe on ${page.url()}`).toEqual([]);
}
