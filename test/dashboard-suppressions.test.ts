// The dashboard's do-not-call list in Chromium: an admin adds a number (and changes its reason), sees it
// listed, removes it after a confirmation page, each change in the audit log with its mode; the list
// follows the test-mode switch (a number added in test mode stops test calls only); a viewer reads the
// list without controls and is refused a forced change; hostile notes show as text; axe stays clean.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { rawRequest } from './support/app.js';
import { testNumber } from './support/calls.js';
import type { ErrorResponse } from './support/json.js';
import { expectAccessible, launchBrowser, signedInPage } from './support/dashboard.js';
import { issueApiKey } from '../src/orgs/api-keys.js';
import { orgForMode } from '../src/orgs/modes.js';

let env: WebhookEnv;
let browser: Browser;

beforeAll(async () => {
  env = await webhookEnv();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await env?.close();
});

/** POST /calls to `to` with `key`; returns the status. */
async function callStatus(key: string, to: string): Promise<number> {
  const answer = await rawRequest<ErrorResponse>(env.app, 'POST', '/calls', {
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ agent_id: env.org.agentId, to_e164: to }),
  });
  return answer.status;
}

/** The audit entries of the org about the do-not-call list, oldest first. */
async function auditEntries() {
  return env.database.db
    .selectFrom('audit_log')
    .select(['action', 'target', 'livemode'])
    .where('org_id', '=', env.org.orgId)
    .where('action', 'like', 'suppression.%')
    .orderBy('at')
    .execute();
}

/** The page's status message, its white space collapsed. */
async function statusText(page: Page): Promise<string> {
  return ((await page.getByRole('status').textContent()) ?? '').replace(/\s+/g, ' ');
}

async function addNumber(page: Page, phone: string, reason: string, note = ''): Promise<void> {
  await page.getByLabel('Phone number (E.164)').fill(phone);
  await page.getByLabel('Reason').selectOption(reason);
  await page.getByLabel('Note (optional)').fill(note);
  await page.getByRole('button', { name: 'Add to the list' }).click();
  await page.getByRole('status').waitFor();
}

describe('the do-not-call list page', { timeout: 180_000 }, () => {
  it('lets an admin add, change and remove numbers, audited, with axe clean on each page', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.getByRole('link', { name: 'Do-not-call list' }).click();
    await page.getByRole('heading', { name: 'Do-not-call list' }).waitFor();
    expect(await page.locator('main').textContent()).toContain('No numbers on the live do-not-call list.');
    await expectAccessible(page);

    const phone = testNumber('6001');
    await addNumber(page, phone, 'opted_out', '<script>alert(1)</script>');
    expect(await statusText(page)).toContain(`${phone} was added to the list.`);
    const row = page.getByRole('row').filter({ hasText: phone });
    expect(await row.textContent()).toContain('opted_out');
    // A hostile note is shown as text.
    expect(await row.textContent()).toContain('<script>alert(1)</script>');
    expect(await row.textContent()).toContain('dashboard');
    await expectAccessible(page);
    expect(await callStatus(env.org.key, phone)).toBe(403);

    await addNumber(page, phone, 'complaint');
    expect(await statusText(page)).toContain('was already listed; its reason and note were replaced');
    expect(await page.getByRole('row').filter({ hasText: phone }).textContent()).toContain('complaint');
    // Reloading that answer sends the same form again: refused, so nothing is changed or audited twice.
    const again = await page.reload();
    expect(again!.status()).toBe(409);
    await page.goto('/dashboard/suppressions');

    // Bad input is refused with the error under its field, and the form comes back as it was sent.
    const other = testNumber('6002');
    await page.getByLabel('Phone number (E.164)').fill('98123');
    await page.getByLabel('Reason').selectOption('wrong_number');
    await page.getByLabel('Note (optional)').fill('asked twice');
    await page.getByRole('button', { name: 'Add to the list' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('The number was not added');
    const phoneField = page.getByLabel('Phone number (E.164)');
    expect(await phoneField.inputValue()).toBe('98123');
    expect(await phoneField.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#phone_e164-error').textContent()).toContain('must be an E.164 number');
    expect(await page.getByLabel('Reason').inputValue()).toBe('wrong_number');
    expect(await page.getByLabel('Note (optional)').inputValue()).toBe('asked twice');
    await expectAccessible(page);
    // Nothing was done, so the refused form may be sent again as it was: refused again, not "already sent".
    expect((await page.reload())!.status()).toBe(400);
    await phoneField.fill(other);
    await page.getByRole('button', { name: 'Add to the list' }).click();
    await page.getByRole('status').waitFor();
    expect(await statusText(page)).toContain(`${other} was added to the list.`);
    expect(await page.getByRole('row').filter({ hasText: other }).textContent()).toContain('asked twice');

    await page.getByRole('link', { name: `Remove ${phone}` }).click();
    await page.getByRole('heading', { name: 'Remove from the do-not-call list' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Remove number' }).click();
    await page.getByRole('heading', { name: 'Do-not-call list' }).waitFor();
    expect(await statusText(page)).toContain('The number was removed from the list.');
    expect(await page.getByRole('row').filter({ hasText: phone }).count()).toBe(0);
    expect(await callStatus(env.org.key, phone)).toBe(201);

    expect(await auditEntries()).toEqual([
      { action: 'suppression.added', target: phone, livemode: true },
      { action: 'suppression.updated', target: phone, livemode: true },
      { action: 'suppression.added', target: other, livemode: true },
      { action: 'suppression.removed', target: phone, livemode: true },
    ]);
    await page.goto('/dashboard/audit');
    expect(await page.getByRole('row').filter({ hasText: 'suppression.removed' }).count()).toBe(1);

    // Removing a number that is not listed (an old confirmation page) is a 404 page, and nothing is audited.
    const missing = await page.goto(`/dashboard/suppressions/remove?phone_e164=${encodeURIComponent(phone)}`);
    expect(missing?.status()).toBe(404);
    expect(await auditEntries()).toHaveLength(4);
  });

  it('follows the test-mode switch: a number added in test mode stops test calls only', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const { key: testKey } = await issueApiKey(env.database.db, env.org.orgId, { mode: 'test' });
    const twinId = await orgForMode(env.database.db, env.org.orgId, 'test');
    const [testOnly, liveOnly] = [testNumber('6002'), testNumber('6003')];
    await rawRequest(env.app, 'POST', '/suppressions', {
      headers: { Authorization: `Bearer ${env.org.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ phone_e164: liveOnly, reason: 'opted_out' }),
    });

    await page.goto('/dashboard/suppressions');
    await page.getByRole('button', { name: 'Test mode' }).click();
    await page.getByRole('region', { name: 'Test mode' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/suppressions');
    expect(await page.getByRole('row').filter({ hasText: liveOnly }).count()).toBe(0);
    await addNumber(page, testOnly, 'wrong_number');
    await expectAccessible(page);
    const stored = await env.database.db
      .selectFrom('suppressions')
      .select('org_id')
      .where('phone_e164', '=', testOnly)
      .execute();
    expect(stored).toEqual([{ org_id: twinId }]);
    expect(await callStatus(testKey, testOnly)).toBe(403);
    expect(await callStatus(env.org.key, testOnly)).toBe(201);
    expect(await callStatus(testKey, liveOnly)).toBe(201);
    expect((await auditEntries()).at(-1)).toEqual({ action: 'suppression.added', target: testOnly, livemode: false });

    // Back in live mode the live entry shows, the test one does not.
    await page.getByRole('button', { name: 'Test mode' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Test mode' }).count()).toBe(0);
    expect(await page.getByRole('row').filter({ hasText: liveOnly }).count()).toBe(1);
    expect(await page.getByRole('row').filter({ hasText: testOnly }).count()).toBe(0);
  });

  it('shows a viewer the list without controls, and refuses a forced change', async () => {
    const phone = testNumber('6004');
    await rawRequest(env.app, 'POST', '/suppressions', {
      headers: { Authorization: `Bearer ${env.org.key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ phone_e164: phone, reason: 'complaint' }),
    });
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'viewer');
    await page.getByRole('link', { name: 'Do-not-call list' }).click();
    await page.getByRole('row').filter({ hasText: phone }).waitFor();
    expect(await page.getByRole('button', { name: 'Add to the list' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: `Remove ${phone}` }).count()).toBe(0);
    await expectAccessible(page);

    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const before = await auditEntries();
    for (const [path, form] of [
      ['/dashboard/suppressions', { _csrf: csrf, phone_e164: testNumber('6005'), reason: 'other' }],
      [`/dashboard/suppressions/remove?phone_e164=${encodeURIComponent(phone)}`, { _csrf: csrf }],
    ] as const) {
      const answer = await page.request.post(path, { form, headers: { Origin: env.app.baseUrl } });
      expect(answer.status(), path).toBe(403);
    }
    const confirm = await page.goto(`/dashboard/suppressions/remove?phone_e164=${encodeURIComponent(phone)}`);
    expect(confirm?.status()).toBe(403);
    expect(await auditEntries()).toEqual(before);
    expect(await callStatus(env.org.key, phone)).toBe(403);
  });
});
