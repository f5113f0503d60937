// The dashboard on a phone-sized screen (360 CSS pixels wide): no page scrolls sideways as a whole. A
// table wider than the screen scrolls inside a box of its own, which takes the keyboard focus (so it
// can be scrolled without a mouse) and is named after the table; every page still passes axe.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { webhookEnv, register, type WebhookEnv } from './support/webhook-env.js';
import { answer, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { rawRequest } from './support/app.js';
import type { Schemas } from './support/json.js';
import { testNumber, waitFor } from './support/calls.js';
import { createCampaign, createContacts } from './support/campaigns.js';
import { expectAccessible, launchBrowser, signedInPage } from './support/dashboard.js';

const NARROW = { width: 360, height: 740 };

let env: WebhookEnv;
let browser: Browser;
let receiver: Receiver;
const paths: string[] = [];

beforeAll(async () => {
  env = await webhookEnv();
  env.worker({ start: true });
  receiver = await startReceiver(answer(500, 'The receiver is down for maintenance. '.repeat(8)));
  browser = await launchBrowser();
  // An endpoint first, so the contacts below reach its delivery log (failed attempts with a long answer).
  const webhook = await register(env, `${receiver.url}/a/rather/long/path/for/a/receiver`, [
    'contact.created',
    'call.completed',
  ]);
  const json = { Authorization: `Bearer ${env.org.key}`, 'Content-Type': 'application/json' };
  const placed = await rawRequest<Schemas['CallCreatedResponse']>(env.app, 'POST', '/calls', {
    headers: json,
    body: JSON.stringify({ agent_id: env.org.agentId, to_e164: testNumber('4242'), metadata: { crm: 'x'.repeat(80) } }),
  });
  expect(placed.status).toBe(201);
  const client = env.app.client(env.org.key);
  const contactIds = await createContacts(client, [testNumber('4243'), testNumber('4244')]);
  const campaign = await createCampaign(client, {
    name: 'A campaign with a rather long name for a phone',
    agent_id: env.org.agentId,
    contacts: { contact_ids: contactIds },
  });
  const suppressed = await rawRequest(env.app, 'POST', '/suppressions', {
    headers: json,
    body: JSON.stringify({
      phone_e164: testNumber('4245'),
      reason: 'opted_out',
      note: 'Asked on a call not to be called again',
    }),
  });
  expect(suppressed.status).toBe(201);
  await waitFor('a logged delivery attempt', () =>
    env.database.db.selectFrom('webhook_attempts').select('id').executeTakeFirst(),
  );
  paths.push(
    '/dashboard',
    '/dashboard/keys',
    '/dashboard/webhooks',
    `/dashboard/webhooks/${webhook.id}`,
    '/dashboard/calls',
    `/dashboard/calls/${placed.body.data.id}`,
    '/dashboard/contacts',
    '/dashboard/campaigns',
    '/dashboard/campaigns/new',
    `/dashboard/campaigns/${campaign.id}`,
    '/dashboard/suppressions',
    '/dashboard/members',
    '/dashboard/audit',
  );
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await env?.close();
});

/** How far the page as a whole scrolls sideways, in CSS pixels (0: it fits the screen). */
function sidewaysScroll(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

describe('a phone-sized screen', { timeout: 120_000 }, () => {
  it('never scrolls a page sideways, and passes axe', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    // The header names the member: a long address must wrap there too.
    await env.database.db
      .updateTable('dashboard_users')
      .set({ email: 'a.rather.long.member.address@customer-operations.example.com' })
      .where('org_id', '=', env.org.orgId)
      .execute();
    await page.setViewportSize(NARROW);
    for (const path of paths) {
      await page.goto(path);
      // Polled: a page still settling its layout (a busy machine) is judged once it has.
      await expect.poll(() => sidewaysScroll(page), { message: path }).toBe(0);
      await expectAccessible(page, { alsoRules: ['target-size'] });
    }
  });

  it('scrolls a wide table in its own named box, reachable by the keyboard', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.setViewportSize(NARROW);
    await page.goto('/dashboard/calls');
    const box = page.getByRole('region', { name: 'Calls' });
    expect(await box.getAttribute('tabindex')).toBe('0');
    const widths = await box.evaluate((element) => ({ inner: element.scrollWidth, outer: element.clientWidth }));
    expect(widths.inner).toBeGreaterThan(widths.outer);
    await box.focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(() => box.evaluate((element) => element.scrollLeft)).toBeGreaterThan(0);
  });

  it('keeps the focused skip link above the test-mode banner, which scrolls away on a phone', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.getByRole('button', { name: 'Test mode' }).click();
    const banner = page.getByRole('region', { name: 'Test mode' });
    await banner.waitFor();
    const skip = page.getByRole('link', { name: 'Skip to content' });
    await page.keyboard.press('Tab');
    await expect.poll(() => skip.evaluate((link) => link === document.activeElement)).toBe(true);
    const skipOnTop = await skip.evaluate((link) => {
      const box = link.getBoundingClientRect();
      return link.contains(document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2));
    });
    expect(skipOnTop).toBe(true);

    // Several lines tall on a phone, a banner that stayed would hide what the keyboard moves to.
    await page.setViewportSize(NARROW);
    await page.goto('/dashboard/campaigns/new');
    await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
    expect(await banner.evaluate((element) => element.getBoundingClientRect().bottom)).toBeLessThanOrEqual(0);
    await page.getByRole('button', { name: 'Test mode' }).click();
    await expect.poll(() => banner.count()).toBe(0);
  });
});
