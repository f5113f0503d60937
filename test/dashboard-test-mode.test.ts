// The dashboard's test-mode switch in Chromium: on, every page carries the banner and says so in its
// title; keys, calls, contacts, webhooks and the balance are the test twin's (a key made there is a
// svc_test_ key, data made with it shows only in test mode and live data only in live mode); an admin
// resets the test balance; the audit log records each change's mode; axe stays clean with the banner.
// And who may do what: the switch needs the session's CSRF token, a viewer cannot reset the balance,
// and a reset is refused in live mode. The page for an address with no page is drawn like the others:
// with the banner for a member in test mode, and with nothing of a session for a visitor signed out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { answer, startReceiver } from './support/webhook-receiver.js';
import { rawRequest } from './support/app.js';
import { testNumber } from './support/calls.js';
import { parseJson, type Schemas } from './support/json.js';
import { expectAccessible, launchBrowser, newContext, signedInPage } from './support/dashboard.js';

let env: WebhookEnv;
let browser: Browser;
let twinId: string;

beforeAll(async () => {
  env = await webhookEnv();
  browser = await launchBrowser();
  const twin = await env.database.db
    .selectFrom('orgs')
    .select('id')
    .where('live_org_id', '=', env.org.orgId)
    .executeTakeFirstOrThrow();
  twinId = twin.id;
});

afterAll(async () => {
  await browser?.close();
  await env?.close();
});

async function balanceOf(orgId: string): Promise<number> {
  const row = await env.database.db
    .selectFrom('orgs')
    .select('balance_paise')
    .where('id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.balance_paise);
}

/** Places a call and stores a contact named `name` through the API with `key`; returns the call's id. */
async function callAndContact(key: string, name: string): Promise<string> {
  const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
  const placed = await rawRequest<Schemas['CallCreatedResponse']>(env.app, 'POST', '/calls', {
    headers,
    body: JSON.stringify({ agent_id: env.org.agentId, to_e164: testNumber('4242') }),
  });
  expect(placed.status).toBe(201);
  const stored = await rawRequest(env.app, 'POST', '/contacts', {
    headers,
    body: JSON.stringify({ phone_e164: testNumber('1111'), name, consent_capture: 'manual' }),
  });
  expect(stored.status).toBe(201);
  return placed.body.data.id;
}

/** The test-mode banner, as assistive technology finds it. */
function banner(page: Page) {
  return page.getByRole('region', { name: 'Test mode' });
}

/** Turns the switch over from the page shown and waits for the page it leads back to. */
async function flipSwitch(page: Page, to: 'test' | 'live'): Promise<void> {
  const button = page.getByRole('button', { name: 'Test mode' });
  expect(await button.getAttribute('aria-pressed')).toBe(to === 'test' ? 'false' : 'true');
  await button.click();
  await expect.poll(() => button.getAttribute('aria-pressed')).toBe(to === 'test' ? 'true' : 'false');
}

async function csrfOf(page: Page): Promise<string> {
  return page.locator('input[name="_csrf"]').first().inputValue();
}

describe('test mode in the dashboard', { timeout: 180_000 }, () => {
  it('shows the test twin behind a banner on every page, and live data again once switched off', async () => {
    const liveCall = await callAndContact(env.org.key, 'Live Lata');
    const liveBalance = await balanceOf(env.org.orgId);
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    expect(await banner(page).count()).toBe(0);
    expect(await page.title()).not.toContain('Test mode');

    // On from the keys page: back on the keys page, now the test twin's (none yet; the live key is not listed).
    await page.goto('/dashboard/keys');
    await flipSwitch(page, 'test');
    expect(new URL(page.url()).pathname).toBe('/dashboard/keys');
    expect(await banner(page).textContent()).toContain('you are viewing test data');
    expect(await page.title()).toBe('API keys · Test mode · Dashboard');
    expect(await page.locator('main').textContent()).toContain('No test API keys yet.');
    await page.getByLabel('Label (optional)').fill('CI conformance');
    await page.getByRole('button', { name: 'Create API key' }).click();
    const testKey = (await page.locator('#new-key').textContent())!.trim();
    expect(testKey).toMatch(/^svc_test_[a-z0-9]{8}_[A-Za-z0-9]{32}$/);
    await expectAccessible(page);
    await page.goto('/dashboard/keys');
    const keyRows = page.locator('main tbody tr');
    expect(await keyRows.count()).toBe(1);
    expect(await keyRows.textContent()).toContain(`svc_test_${testKey.split('_')[2]}_…`);
    expect(await page.content()).not.toContain(testKey);

    // Data made with the test key is the twin's, shown in test mode.
    const testCall = await callAndContact(testKey, 'Test Tara');
    await page.goto('/dashboard/calls');
    await page.getByRole('link', { name: testCall }).waitFor();
    expect(await page.getByRole('link', { name: liveCall }).count()).toBe(0);
    await expectAccessible(page);
    await page.getByRole('link', { name: testCall }).click();
    await page.getByRole('heading', { name: 'Call', exact: true }).waitFor();
    // The agent is the live org's, shared by both modes, and found by its name.
    expect(await page.locator('main').textContent()).toContain(`Test agent (${env.org.agentId})`);
    await page.goto('/dashboard/contacts');
    expect(await page.getByRole('row').filter({ hasText: 'Test Tara' }).count()).toBe(1);
    expect(await page.getByRole('row').filter({ hasText: 'Live Lata' }).count()).toBe(0);

    // An endpoint added in test mode is the twin's; its test event says livemode false.
    const receiver = await startReceiver(answer(204));
    await page.goto('/dashboard/webhooks');
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByLabel('call.completed').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('link', { name: "Open the endpoint's page" }).click();
    const endpointPath = new URL(page.url()).pathname;
    await page.getByRole('button', { name: 'Send test event' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Test event sent');
    expect(parseJson<{ livemode: boolean }>(receiver.requests[0]!.rawBody).livemode).toBe(false);
    await receiver.close();
    const endpoint = await env.database.db
      .selectFrom('webhooks')
      .select('org_id')
      .where('url', '=', receiver.url)
      .executeTakeFirstOrThrow();
    expect(endpoint.org_id).toBe(twinId);

    // The test balance, spent by the test call's hold, goes back to its opening amount; live is untouched.
    await page.goto('/dashboard');
    const credits = page.locator('dl.facts dd').nth(2);
    expect(await credits.textContent()).toContain('(test credits)');
    expect(await credits.textContent()).not.toContain('₹10,000.00');
    expect(await balanceOf(twinId)).toBeLessThan(1_000_000);
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Reset test balance' }).click();
    await page.getByRole('heading', { name: 'Reset test balance' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Reset test balance' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.getByRole('status').textContent()).toContain('Test balance reset to ₹10,000.00.');
    expect(await credits.textContent()).toContain('₹10,000.00');
    expect(await balanceOf(twinId)).toBe(1_000_000);
    expect(await balanceOf(env.org.orgId)).toBe(liveBalance);

    // Every signed-in page carries the banner and says test mode in its title: members and the audit log
    // too, and the 404 of a live call looked for in test mode.
    for (const path of [
      '/dashboard',
      '/dashboard/keys',
      `/dashboard/keys/${testKey.split('_')[2]}/revoke`,
      '/dashboard/webhooks',
      endpointPath,
      `${endpointPath}/delete`,
      '/dashboard/calls',
      `/dashboard/calls/${testCall}`,
      '/dashboard/contacts',
      '/dashboard/members',
      '/dashboard/audit',
      '/dashboard/test-balance/reset',
      `/dashboard/calls/${liveCall}`,
    ]) {
      await page.goto(path);
      expect(await banner(page).isVisible(), path).toBe(true);
      expect(await page.title(), path).toContain(' · Test mode · ');
    }
    // The audit log is the org's whole, each change with its mode.
    await page.goto('/dashboard/audit');
    await expectAccessible(page);
    const modeOf = async (action: string) =>
      (await page.getByRole('row').filter({ hasText: action }).first().getByRole('cell').nth(1).textContent())!.trim();
    expect(await page.getByRole('columnheader', { name: 'Mode' }).count()).toBe(1);
    for (const action of ['api_key.created', 'webhook.created', 'webhook.test_sent', 'credits.test_reset']) {
      expect(await modeOf(action), action).toBe('Test');
    }
    expect(await modeOf('sign_in')).toBe('Live');
    const recorded = await env.database.db
      .selectFrom('audit_log')
      .select(['action', 'livemode', 'target'])
      .where('org_id', '=', env.org.orgId)
      .where('action', 'in', ['api_key.created', 'webhook.created', 'credits.test_reset'])
      .execute();
    expect(recorded).toHaveLength(3);
    expect(recorded.every((entry) => !entry.livemode)).toBe(true);
    expect(recorded.find((entry) => entry.action === 'api_key.created')!.target).toMatch(/^svc_test_/);

    // Off again: live data only, no banner, and a test record is not found.
    await page.goto('/dashboard/webhooks');
    await flipSwitch(page, 'live');
    expect(new URL(page.url()).pathname).toBe('/dashboard/webhooks');
    expect(await banner(page).count()).toBe(0);
    expect(await page.title()).toBe('Webhooks · Dashboard');
    expect(await page.locator('main').textContent()).not.toContain(receiver.url);
    await page.goto('/dashboard/calls');
    await page.getByRole('link', { name: liveCall }).waitFor();
    expect(await page.getByRole('link', { name: testCall }).count()).toBe(0);
    expect((await page.goto(`/dashboard/calls/${testCall}`))!.status()).toBe(404);
    expect((await page.goto(endpointPath))!.status()).toBe(404);
    await page.goto('/dashboard/contacts');
    expect(await page.getByRole('row').filter({ hasText: 'Live Lata' }).count()).toBe(1);
    expect(await page.getByRole('row').filter({ hasText: 'Test Tara' }).count()).toBe(0);
    await page.goto('/dashboard/keys');
    expect(await page.locator('main tbody').textContent()).not.toContain('svc_test_');
    expect(await page.locator('main tbody').textContent()).toContain('svc_live_');
    await page.goto('/dashboard');
    expect(await page.getByRole('link', { name: 'Reset test balance' }).count()).toBe(0);
    await page.context().close();
  });

  it('keeps the mode in a strict cookie, refuses the switch without the CSRF token, and forgets it at sign-out', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const origin = env.app.baseUrl;
    for (const token of ['x'.repeat(43), '']) {
      const forged = await page.request.post(`${origin}/dashboard/mode`, {
        form: { _csrf: token, mode: 'test', next: '/dashboard' },
        headers: { Origin: origin },
        maxRedirects: 0,
      });
      expect(forged.status()).toBe(403);
      expect(forged.headers()['set-cookie'] ?? '').not.toContain('dashboard_mode');
    }
    await page.reload();
    expect(await banner(page).count()).toBe(0);

    const csrf = await csrfOf(page);
    const unknown = await page.request.post(`${origin}/dashboard/mode`, {
      form: { _csrf: csrf, mode: 'sandbox' },
      headers: { Origin: origin },
      maxRedirects: 0,
    });
    expect(unknown.status()).toBe(400);
    // Back to a dashboard page only, never another site.
    const elsewhere = await page.request.post(`${origin}/dashboard/mode`, {
      form: { _csrf: csrf, mode: 'test', next: 'https://example.com/' },
      headers: { Origin: origin },
      maxRedirects: 0,
    });
    expect(elsewhere.status()).toBe(303);
    expect(elsewhere.headers()['location']).toBe('/dashboard');
    const cookie = (await page.context().cookies()).find((entry) => entry.name === 'dashboard_mode')!;
    expect(cookie).toMatchObject({ value: 'test', httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    await page.reload();
    await banner(page).waitFor();

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect((await page.context().cookies()).some((entry) => entry.name === 'dashboard_mode')).toBe(false);
    await page.context().close();
  });

  it('draws the page for an unknown address with the banner in test mode, and signed out without a session', async () => {
    const missing = '/dashboard/no-such-page';
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'viewer');
    await flipSwitch(page, 'test');
    expect((await page.goto(missing))!.status()).toBe(404);
    expect(await banner(page).textContent()).toContain('you are viewing test data');
    expect(await page.title()).toBe('Not found · Test mode · Dashboard');
    expect(await page.getByRole('button', { name: 'Test mode' }).getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByRole('link', { name: 'Back to the overview' }).count()).toBe(1);
    await expectAccessible(page);

    // Switched off from there: back on the overview, and the same address is live mode's 404.
    await flipSwitch(page, 'live');
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    expect((await page.goto(missing))!.status()).toBe(404);
    expect(await banner(page).count()).toBe(0);
    expect(await page.title()).toBe('Not found · Dashboard');
    expect(await page.getByRole('navigation', { name: 'Dashboard' }).count()).toBe(1);
    await page.context().close();

    // Signed out, a mode cookie alone shows nothing: no banner, no navigation, no switch.
    const context = await newContext(browser, env.app.baseUrl);
    await context.addCookies([{ name: 'dashboard_mode', value: 'test', url: `${env.app.baseUrl}/dashboard` }]);
    const visitor = await context.newPage();
    expect((await visitor.goto(missing))!.status()).toBe(404);
    expect(await banner(visitor).count()).toBe(0);
    expect(await visitor.title()).toBe('Not found · Dashboard');
    expect(await visitor.getByRole('navigation').count()).toBe(0);
    expect(await visitor.getByRole('button').count()).toBe(0);
    expect(await visitor.getByRole('link', { name: 'Back to the dashboard' }).count()).toBe(1);
    await expectAccessible(visitor);
    await context.close();
  });

  it("refuses a viewer's reset of the test balance, and any reset in live mode", async () => {
    const resets = () =>
      env.database.db
        .selectFrom('credit_ledger')
        .select('id')
        .where('org_id', '=', twinId)
        .where('kind', '=', 'reset')
        .execute();
    const before = (await resets()).length;
    const origin = env.app.baseUrl;

    const viewer = await signedInPage(browser, origin, env.database.db, env.org.orgId, 'viewer');
    // Any member may switch: it changes what they see, not the org.
    await flipSwitch(viewer, 'test');
    await banner(viewer).waitFor();
    await expectAccessible(viewer);
    expect(await viewer.getByRole('link', { name: 'Reset test balance' }).count()).toBe(0);
    expect((await viewer.goto('/dashboard/test-balance/reset'))!.status()).toBe(403);
    const forced = await viewer.request.post(`${origin}/dashboard/test-balance/reset`, {
      form: { _csrf: await csrfOf(viewer) },
      headers: { Origin: origin },
      maxRedirects: 0,
    });
    expect(forced.status()).toBe(403);
    await viewer.context().close();

    const admin = await signedInPage(browser, origin, env.database.db, env.org.orgId, 'admin');
    expect((await admin.goto('/dashboard/test-balance/reset'))!.status()).toBe(409);
    const inLive = await admin.request.post(`${origin}/dashboard/test-balance/reset`, {
      form: { _csrf: await csrfOf(admin) },
      headers: { Origin: origin },
      maxRedirects: 0,
    });
    expect(inLive.status()).toBe(409);
    expect(await inLive.text()).toContain('Switch test mode on to reset the test balance');
    await admin.context().close();
    expect(await resets()).toHaveLength(before);
  });
});
