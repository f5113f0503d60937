// Outside text in the dashboard, in Chromium: contact names, metadata and a receiver's answer are each
// isolated and show their control and bidi characters as code points (the stored text unchanged);
// at 1280 px no table header or short cell breaks inside a word while long values wrap in place; the
// CSV import report says refused values in words with the row's line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { answer, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { rawRequest } from './support/app.js';
import { testNumber } from './support/calls.js';
import { expectAccessible, launchBrowser, signedInPage } from './support/dashboard.js';

// A receiver's answer with terminal escapes, a C1 control, a bidi override and isolate, and a long token.
const LONG_TOKEN = 'x'.repeat(300);
const EXCERPT = `ok \u001b]0;owned\u0007 \u009b31m \u202Eevil\u2066 done ${LONG_TOKEN}`;
const NAME = 'Rami \u202Egnp.exe\u202C عربي';
// What a page may not contain as such: C0 (but tab and line feed) and C1 controls, and bidi controls.
const HIDDEN = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/u;

let env: WebhookEnv;
let receiver: Receiver;
let browser: Browser;
let webhookId: string;
let contactId: string;

/** Calls the API as the org; the answer's body is an item's envelope, as far as these tests read it. */
async function api(method: string, path: string, body?: unknown) {
  return rawRequest<{ data: { id: string; name?: string | null; metadata?: unknown } }>(env.app, method, path, {
    headers: { Authorization: `Bearer ${env.org.key}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

beforeAll(async () => {
  env = await webhookEnv();
  receiver = await startReceiver(answer(200, EXCERPT, { 'content-type': 'text/plain' }));
  browser = await launchBrowser();
  const contact = await api('POST', '/contacts', {
    phone_e164: testNumber('7001'),
    name: NAME,
    email: `a.very.long.address.${'y'.repeat(60)}@example.com`,
    consent_capture: 'manual',
    metadata: { note: '\u2067abc\u2069', c1: 'a\u0085b' },
  });
  expect(contact.status).toBeLessThan(300);
  contactId = contact.body.data.id;
  const webhook = await api('POST', '/webhooks', { url: receiver.url, events: ['contact.created'] });
  expect(webhook.status).toBe(201);
  webhookId = webhook.body.data.id;
  expect((await api('POST', `/webhooks/${webhookId}/test`)).status).toBeLessThan(300);
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await env?.close();
});

/** The words of table headers and cells (long values aside) that the page draws on more than one line. */
function brokenWords(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const broken: string[] = [];
    const cells = document.querySelectorAll('main table th, main table td');
    for (const cell of cells) {
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement?.closest('.mono, .long, pre, code')) continue;
        const text = node.textContent ?? '';
        for (const match of text.matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, match.index);
          range.setEnd(node, match.index + match[0].length);
          const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
          if (lines.size > 1) broken.push(match[0]);
        }
      }
    }
    return broken;
  });
}

/** How far the page's content reaches past the viewport's width, in CSS pixels (0 when it fits). */
function overflow(page: Page): Promise<number> {
  return page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
}

/** How many lines an element's text takes. */
function lineCount(page: Page, selector: string): Promise<number> {
  return page
    .locator(selector)
    .first()
    .evaluate((element) => {
      const range = document.createRange();
      range.selectNodeContents(element);
      return new Set([...range.getClientRects()].map((rect) => Math.round(rect.top))).size;
    });
}

describe('outside text', { timeout: 120_000 }, () => {
  it('isolates contact names and metadata and shows their control characters, leaving the stored text as it was', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.goto('/dashboard/contacts');
    const row = page.getByRole('row').filter({ hasText: 'Rami' });
    expect(await row.locator('td').first().locator('bdi').textContent()).toBe('Rami <U+202E>gnp.exe<U+202C> عربي');
    const metadata = (await row.locator('pre bdi').textContent())!;
    expect(metadata).toContain('<U+2067>abc<U+2069>');
    expect(metadata).toContain('a<U+0085>b');
    expect(HIDDEN.test((await page.locator('main').textContent())!)).toBe(false);
    await expectAccessible(page);

    const stored = await api('GET', `/contacts/${contactId}`);
    expect(stored.body.data.name).toBe(NAME);
    expect(stored.body.data.metadata).toEqual({ note: '\u2067abc\u2069', c1: 'a\u0085b' });
    await page.context().close();
  });

  it("isolates a receiver's answer in the delivery log and shows its escapes and bidi controls as code points", async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.goto(`/dashboard/webhooks/${webhookId}`);
    const row = page.getByRole('row').filter({ hasText: 'webhook.test' });
    expect(await row.locator('td bdi', { hasText: 'webhook.test' }).count()).toBe(1);
    const excerpt = (await row.locator('pre bdi').textContent())!;
    expect(excerpt).toContain('ok <U+001B>]0;owned<U+0007> <U+009B>31m <U+202E>evil<U+2066> done');
    expect(HIDDEN.test((await page.locator('main').textContent())!)).toBe(false);
    expect(await page.locator('dd bdi', { hasText: receiver.url }).count()).toBe(1);
    await expectAccessible(page);
    await page.context().close();
  });

  it('at 1280 px breaks only long values, never a header or a short cell inside a word', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.setViewportSize({ width: 1280, height: 900 });

    await page.goto(`/dashboard/webhooks/${webhookId}`);
    await page.getByRole('row').filter({ hasText: 'webhook.test' }).waitFor();
    expect(await brokenWords(page)).toEqual([]);
    expect(await overflow(page)).toBe(0);
    // The 300-character token in the excerpt wraps instead of widening the table.
    expect(await lineCount(page, 'td pre')).toBeGreaterThan(1);

    await page.goto('/dashboard/contacts');
    expect(await brokenWords(page)).toEqual([]);
    expect(await overflow(page)).toBe(0);
    expect(await lineCount(page, 'td bdi.long')).toBeGreaterThan(1);
    await page.context().close();
  });

  it('reports refused CSV rows in words with the value and the line', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto('/dashboard/contacts');
    await page.getByLabel('CSV contents').fill(`phone_e164,name\n${testNumber('7002')},Asha\n0123,Bad row\n`);
    await page.getByRole('button', { name: 'Import contacts' }).click();
    const rejected = page
      .getByRole('table', { name: 'Rejected rows' })
      .getByRole('row')
      .filter({ hasText: 'phone_e164' });
    await expect
      .poll(() => rejected.textContent())
      .toMatch(
        /^\s*3\s+phone_e164\s+phone_e164: must be an E\.164 number: a \+ followed by 7 to 15 digits, the first not 0; got "0123"\s*$/,
      );
    expect(await page.textContent('main')).not.toContain('pattern');
    expect(await brokenWords(page)).toEqual([]);
    await expectAccessible(page);
    await page.context().close();
  });
});
