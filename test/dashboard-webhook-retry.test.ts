// The dashboard's endpoint page in Chromium, honest about redelivery: a delivery waiting for its next
// retry offers "Retry now" (made due at once, sent by the worker), a Redeliver of an event already
// pending says nothing new was queued, and a retry of a delivery no longer pending says so. Disabling
// and deleting an endpoint with a large backlog takes effect at once from the page too (10,000 pending
// here; test/webhooks-backlog.test.ts has issue 38's 100,000 for the API).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { seedBacklog } from './support/backlog.js';
import { contactCreated, emit, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { answer, slowly, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { csrfTokenOf, expectAccessible, launchBrowser, signedInPage } from './support/dashboard.js';

let env: WebhookEnv;
let browser: Browser;
const receivers: Receiver[] = [];

beforeAll(async () => {
  env = await webhookEnv();
  env.worker({ start: true, sweepIntervalMs: 100 });
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await env?.close();
});

async function receiver(...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args);
  receivers.push(started);
  return started;
}

/** The endpoint's page, signed in as an admin. */
async function endpointPage(id: string): Promise<Page> {
  const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
  await page.goto(`${env.app.baseUrl}/dashboard/webhooks/${id}`);
  await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
  return page;
}

/** Posts one of the page's row forms as a page shown earlier would (a stale page, a second tab). */
async function postRowForm(page: Page, id: string, path: 'redeliver' | 'retry', deliveryId: string): Promise<string> {
  const answered = await page.context().request.post(`${env.app.baseUrl}/dashboard/webhooks/${id}/${path}`, {
    headers: { Origin: env.app.baseUrl },
    form: { _csrf: csrfTokenOf(await page.content()), delivery_id: deliveryId },
  });
  expect(answered.status()).toBe(200);
  return answered.text();
}

describe('a delivery waiting for its retry, on the endpoint page', { timeout: 180_000 }, () => {
  it('offers Retry now, which sends it at once; Redeliver says honestly that nothing was queued', async () => {
    const target = await receiver(answer(500, 'down'));
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    await target.waitFor(1, 20_000);
    // The worker records the attempt once the receiver has answered, a moment after the request arrived.
    await expect
      .poll(
        async () =>
          (await env.app.client(env.org.key).GET('/webhooks/{id}/deliveries', { params: { path: { id } } })).data!
            .data[0],
      )
      .toMatchObject({ status: 'pending', attempt_count: 1 });
    const [delivery] = (
      await env.app.client(env.org.key).GET('/webhooks/{id}/deliveries', { params: { path: { id } } })
    ).data!.data;

    const page = await endpointPage(id);
    const row = page.getByRole('row').filter({ hasText: 'contact.created' });
    await expect.poll(() => row.count()).toBe(1);
    expect(await row.getByRole('button', { name: 'Retry now' }).count()).toBe(1);
    expect(await row.getByRole('button', { name: 'Redeliver' }).count()).toBe(0);
    await expectAccessible(page);

    // A Redeliver from a page shown earlier: a delivery of the event is pending, so nothing is queued, and it says so.
    const stale = await postRowForm(page, id, 'redeliver', delivery!.id);
    expect(stale).toContain('Nothing new was queued: a delivery of this event is already pending.');
    expect(stale).not.toContain('Redelivery queued');

    target.behaviour = answer(200, 'ok');
    await row.getByRole('button', { name: 'Retry now' }).click();
    await page.getByText('Retry made due now').waitFor();
    await expectAccessible(page);
    // The worker sends it now, not a minute after the first attempt; it is the same delivery's second attempt.
    await target.waitFor(2, 20_000);
    await expect
      .poll(async () => {
        const { data } = await env.app
          .client(env.org.key)
          .GET('/webhooks/{id}/deliveries', { params: { path: { id } } });
        return data!.data;
      })
      .toMatchObject([{ id: delivery!.id, status: 'succeeded', attempt_count: 2 }]);
    expect(target.requests[1]!.headers['x-svc-delivery']).not.toBe(target.requests[0]!.headers['x-svc-delivery']);

    // Retried again from the page shown before it succeeded: nothing to retry, said in words.
    const late = await postRowForm(page, id, 'retry', delivery!.id);
    expect(late).toContain('Nothing was retried: this delivery is no longer pending');
    await sleep(500);
    expect(target.requests).toHaveLength(2);
    await page.reload();
    expect(await row.first().getByRole('button', { name: 'Redeliver' }).count()).toBe(1);

    const audited = await env.database.db
      .selectFrom('audit_log')
      .select('action')
      .where('org_id', '=', env.org.orgId)
      .where('target', '=', delivery!.id)
      .execute();
    expect(audited.map((entry) => entry.action)).toEqual(['webhook.retried']);
  });
});

describe('an endpoint with 10,000 pending deliveries, on its page', { timeout: 300_000 }, () => {
  it('is disabled and then deleted at once, and its receiver gets nothing after either answer', async () => {
    const target = await receiver(slowly(200));
    const { id } = await register(env, target.url);
    await seedBacklog(env.database.db, env.org.orgId, id, 10_000);
    await target.waitFor(4, 20_000);
    const page = await endpointPage(id);

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    const disabledAt = Date.now();
    expect(await page.locator('dl').textContent()).toContain('Disabled');
    await expectAccessible(page);
    await sleep(1_000);
    expect(target.started.filter((at) => at > disabledAt)).toEqual([]);

    await page.getByRole('link', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    expect(await page.getByText(target.url).count()).toBe(0);
    const { data } = await env.app.client(env.org.key).GET('/webhooks', {});
    expect(data?.data.map((webhook) => webhook.id)).not.toContain(id);
  });
});
