// The dashboard's webhooks in Chromium: add an endpoint at a local HTTPS receiver (secret shown once),
// send a test event, see the attempt in the delivery log (a hostile response excerpt shown as text, no
// dialog), filter the log, redeliver, rotate the secret, disable and enable, delete after confirming.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { answer, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { csrfTokenOf, expectAccessible, launchBrowser, signedInPage } from './support/dashboard.js';

const HOSTILE = '<img src=x onerror=alert(1)>';

let env: WebhookEnv;
let receiver: Receiver;
let browser: Browser;

beforeAll(async () => {
  env = await webhookEnv();
  env.worker({ start: true });
  receiver = await startReceiver(answer(500, HOSTILE, { 'content-type': 'text/html' }));
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await env?.close();
});

function noDialogs(page: Page): string[] {
  const dialogs: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  return dialogs;
}

describe('webhooks pages', { timeout: 120_000 }, () => {
  it('adds an endpoint, sends a test event, shows it in the delivery log as text, redelivers it', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const dialogs = noDialogs(page);
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    await expectAccessible(page);

    // A refused form comes back as sent, its error under the field at fault and tied to it.
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The endpoint was not added');
    expect(await page.getByRole('group', { name: 'Events' }).getAttribute('aria-describedby')).toBe('events-error');
    expect(await page.locator('#events-error').textContent()).toMatch(/\S/);
    expect(await page.getByLabel('URL').inputValue()).toBe(receiver.url);
    await expectAccessible(page);

    await page.getByLabel('URL').fill('http://example.com/hooks');
    await page.getByLabel('call.completed').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('The endpoint was not added');
    const url = page.getByLabel('URL');
    expect(await url.getAttribute('aria-invalid')).toBe('true');
    expect(await url.getAttribute('aria-describedby')).toBe('url-error');
    expect(await page.locator('#url-error').textContent()).toContain('https');
    expect(await url.inputValue()).toBe('http://example.com/hooks');
    expect(await page.getByLabel('call.completed').isChecked()).toBe(true);
    await expectAccessible(page);

    await url.fill(receiver.url);
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = (await page.locator('#new-secret').textContent())!.trim();
    expect(secret).toMatch(/^[0-9a-f]{64}$/);
    await expectAccessible(page);
    await page.getByRole('link', { name: "Open the endpoint's page" }).click();
    await page.getByRole('heading', { name: 'Webhook endpoint' }).waitFor();
    expect(await page.content()).not.toContain(secret);

    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
    const firstRow = page.getByRole('row').filter({ hasText: 'webhook.test' });
    await expect.poll(() => firstRow.count()).toBe(1);
    const text = (await firstRow.textContent())!;
    const deliveryId = (await firstRow.locator('td.mono').textContent())!.trim();
    expect(text).toContain(HOSTILE);
    expect(text).toContain('Failed');
    expect(text).toContain('500');
    expect(await page.locator('img').count()).toBe(0);
    await expectAccessible(page);

    // Each row's button names its delivery, so a screen reader's list of buttons tells them apart.
    expect(await page.getByRole('button', { name: `Redeliver, delivery ${deliveryId}`, exact: true }).count()).toBe(1);
    await page.getByRole('button', { name: 'Redeliver' }).first().click();
    await receiver.waitFor(2, 20_000);
    await expect
      .poll(async () => {
        await page.reload();
        return page.getByRole('row').filter({ hasText: 'webhook.test' }).count();
      })
      .toBe(2);

    await page.getByLabel('Outcome').selectOption('succeeded');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.getByText('No delivery attempts match these filters.').count()).toBe(1);
    await page.getByLabel('Outcome').selectOption('failed');
    await page.getByLabel('Event kind').selectOption('webhook.test');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'webhook.test' }).count()).toBe(2);

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = (await page.locator('#new-secret').textContent())!.trim();
    expect(rotated).toMatch(/^[0-9a-f]{64}$/);
    expect(rotated).not.toBe(secret);
    // A leaked secret: rotating with the box ticked ends the old secrets' grace at once.
    await page.getByLabel('End the old secrets at once').check();
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    expect(await page.getByText('New signing secret (the old ones stopped signing):').count()).toBe(1);
    const stored = await env.database.db
      .selectFrom('webhooks')
      .select('previous_secrets')
      .where('url', '=', receiver.url)
      .executeTakeFirstOrThrow();
    expect(stored.previous_secrets).toEqual([]);

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    expect(await page.locator('dl').textContent()).toContain('Disabled');
    // A disabled endpoint offers no redelivery, and a form from before it was disabled is refused in words.
    expect(await page.getByRole('button', { name: 'Redeliver' }).count()).toBe(0);
    await page.getByText('Enable the endpoint to redeliver or retry its events.').waitFor();
    const stale = await page.context().request.post(`${page.url()}/redeliver`, {
      headers: { Origin: env.app.baseUrl },
      form: { _csrf: csrfTokenOf(await page.content()), delivery_id: deliveryId },
    });
    expect(stale.status()).toBe(409);
    expect(await stale.text()).toContain('This endpoint is disabled; enable it to redeliver or retry its events.');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();

    await page.getByRole('link', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Delete webhook endpoint' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByText('No webhook endpoints yet.').waitFor();

    expect(dialogs).toEqual([]);
    const actions = await env.database.db
      .selectFrom('audit_log')
      .select('action')
      .where('org_id', '=', env.org.orgId)
      .orderBy('id')
      .execute();
    expect(actions.map((entry) => entry.action).filter((action) => action.startsWith('webhook.'))).toEqual([
      'webhook.created',
      'webhook.test_sent',
      'webhook.redelivered',
      'webhook.secret_rotated',
      'webhook.secret_rotated',
      'webhook.disabled',
      'webhook.enabled',
      'webhook.deleted',
    ]);
    await page.context().close();
  });
});
