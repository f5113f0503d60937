// The dashboard's campaign pages in Chromium: an admin creates a campaign by consent filter (start read
// as local time in the picked zone) and by an uploaded CSV (rows naming no contact reported by line,
// nothing created), sees refused fields marked next to them, reads a campaign's counters, progress bar
// and contacts (with the link to a last call) and its calls (View calls: the calls page filtered by it),
// pauses, resumes and cancels it (after a confirmation page), each change audited; test-mode campaigns
// stay out of live mode; a hostile name shows as text; a viewer reads without controls and is refused a
// forced change. Nothing dispatches (no workers): states the
// dispatcher would reach are written to the database. axe stays clean on every page.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { rawRequest } from './support/app.js';
import { testNumber } from './support/calls.js';
import type { Schemas } from './support/json.js';
import { expectAccessible, launchBrowser, signedInPage } from './support/dashboard.js';
import { issueApiKey } from '../src/orgs/api-keys.js';
import { orgForMode } from '../src/orgs/modes.js';

type Campaign = Schemas['Campaign'];

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

/** Sends `method path` with `key` and a JSON `body`; fails the test unless the answer is `status`. */
async function api<T>(key: string, method: string, path: string, body: unknown, status: number): Promise<T> {
  const answer = await rawRequest<{ data: T }>(env.app, method, path, {
    headers: { Authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(answer.status, `${method} ${path}`).toBe(status);
  return answer.body.data;
}

/** Adds contacts through the API with `consent`; returns their numbers and ids in order. */
async function addContacts(key: string, consent: string, n: number): Promise<Array<{ phone: string; id: string }>> {
  const added = [];
  for (let i = 0; i < n; i += 1) {
    const phone = testNumber(String(1000 + Math.floor(Math.random() * 9000)));
    const contact = await api<{ id: string }>(
      key,
      'POST',
      '/contacts',
      { phone_e164: phone, consent_capture: consent },
      201,
    );
    added.push({ phone, id: contact.id });
  }
  return added;
}

const ALWAYS = [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' }];

/** Creates a campaign through the API over `contactIds`. */
function apiCampaign(key: string, name: string, contactIds: string[]): Promise<Campaign> {
  const body = {
    name,
    agent_id: env.org.agentId,
    contacts: { contact_ids: contactIds },
    schedule: { timezone: 'Asia/Kolkata', windows: ALWAYS },
  };
  return api<Campaign>(key, 'POST', '/campaigns', body, 201);
}

/** The org's campaigns of the live mode, through the API. */
function liveCampaigns(): Promise<Campaign[]> {
  return api<Campaign[]>(env.org.key, 'GET', '/campaigns?limit=100', undefined, 200);
}

/** The audit entries of the org about campaigns, oldest first. */
async function auditEntries() {
  return env.database.db
    .selectFrom('audit_log')
    .select(['action', 'target', 'livemode'])
    .where('org_id', '=', env.org.orgId)
    .where('action', 'like', 'campaign.%')
    .orderBy('at')
    .execute();
}

/** The text of `locator`'s first match, its white space collapsed. */
async function textOf(page: Page, selector: string): Promise<string> {
  return ((await page.locator(selector).first().textContent()) ?? '').replace(/\s+/g, ' ');
}

/** Opens the create form from the campaigns list and fills its name. */
async function openForm(page: Page, name: string): Promise<void> {
  await page.goto('/dashboard/campaigns');
  await page.getByRole('link', { name: 'New campaign' }).click();
  await page.getByRole('heading', { name: 'New campaign' }).waitFor();
  await page.getByLabel('Name').fill(name);
}

async function submit(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.locator('h1').waitFor();
}

describe('the campaign pages', { timeout: 180_000 }, () => {
  it('creates a campaign by consent filter, lists it with its progress, and passes axe', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const chosen = await addContacts(env.org.key, 'website_form', 2);
    await addContacts(env.org.key, 'imported', 1);
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
    await expectAccessible(page);

    await openForm(page, 'Website leads');
    // The picker starts on the browser's own zone (listed by the server).
    const browserZone = await page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(await page.locator('#timezone').inputValue()).toBe(browserZone);
    // Every control is big enough to hit (WCAG 2.2's target size, off in axe by default), the file picker too.
    await expectAccessible(page, { alsoRules: ['target-size'] });
    await page.locator('#consent').getByLabel('website_form').check();
    await page.locator('#timezone').selectOption('Asia/Kolkata');
    await page.getByLabel('Start (local time in that zone; empty: now)').fill('2030-01-01T09:00');
    await page.locator('#retry_on').getByLabel('busy').check();
    await page.getByLabel('Attempts per contact, at most (the first included)').fill('3');
    await submit(page);
    await page.getByRole('heading', { name: 'Website leads', level: 1 }).waitFor();
    expect(await textOf(page, '[role="status"]')).toContain('Campaign created.');
    expect(await textOf(page, 'main')).toContain('0 of 2 contacts done (0%)');
    await expectAccessible(page);

    const [created] = (await liveCampaigns()).filter((campaign) => campaign.name === 'Website leads');
    expect(created).toMatchObject({
      status: 'scheduled',
      contacts: { filter: { consent_capture: ['website_form'] } },
      schedule: { starts_at: '2030-01-01T03:30:00.000Z', ends_at: null, timezone: 'Asia/Kolkata' },
      retry: { max_attempts: 3, on: ['busy'] },
      max_concurrency: 10,
    });
    expect(created!.schedule.windows).toEqual([
      { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '18:00' },
    ]);
    expect(created!.counters.contacts_total).toBe(chosen.length);
    // The start is shown in the campaign's zone, with UTC beside it.
    expect(await textOf(page, 'main')).toContain('2030-01-01 09:00 (2030-01-01 03:30 UTC)');
    // Reloading the answer is a GET of the campaign's page: nothing is created twice.
    await page.reload();
    expect((await liveCampaigns()).filter((campaign) => campaign.name === 'Website leads')).toHaveLength(1);

    await page.getByRole('link', { name: 'All campaigns' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Website leads' });
    const bar = row.getByRole('progressbar');
    expect([await bar.getAttribute('value'), await bar.getAttribute('max')]).toEqual(['0', '2']);
    expect(await row.textContent()).toContain('2 pending');
    await expectAccessible(page);
    expect(await auditEntries()).toContainEqual({ action: 'campaign.created', target: created!.id, livemode: true });
  });

  it('creates a campaign from an uploaded CSV, reporting by line the rows that name no contact', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const [first, second] = await addContacts(env.org.key, 'manual', 2);
    const unknown = testNumber('0001');
    await openForm(page, 'From a file');
    await page.getByLabel('From a CSV file (below)').check();
    const upload = async (text: string) => {
      await page
        .locator('#csv-file')
        .setInputFiles({ name: 'list.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });
      await expect.poll(() => page.locator('#csv').inputValue()).toBe(text);
    };
    await upload(`phone_e164\n${second!.phone}\n${unknown}\nnot-a-number\n${second!.phone}\n`);
    await submit(page);
    expect(await page.getByRole('alert').textContent()).toContain('The campaign was not created.');
    const report = page.locator('#csv-report');
    expect(await report.getByRole('row').filter({ hasText: '3' }).first().textContent()).toContain(
      `no contact has the number ${unknown}`,
    );
    expect(await report.textContent()).toContain('phone_e164 must be');
    expect(await report.textContent()).toContain('names the same contact as line 2');
    await expectAccessible(page);
    expect((await liveCampaigns()).filter((campaign) => campaign.name === 'From a file')).toEqual([]);

    // More rows than a campaign may name: refused as a whole, pointing to the consent filter.
    await upload(
      `phone_e164\n${Array.from({ length: 1001 }, (_, i) => testNumber(String(i).padStart(4, '0'))).join('\n')}\n`,
    );
    await submit(page);
    expect(await textOf(page, '#csv-error')).toContain('names 1,001 contacts; a campaign takes at most 1,000');
    expect((await liveCampaigns()).filter((campaign) => campaign.name === 'From a file')).toEqual([]);

    // Put right: the form came back as sent; a file naming contacts by id and by number goes through.
    expect(await page.getByLabel('Name').inputValue()).toBe('From a file');
    await upload(`contact_id,phone_e164\n,${second!.phone}\n${first!.id},\n`);
    await submit(page);
    await page.getByRole('heading', { name: 'From a file', level: 1 }).waitFor();
    const [created] = (await liveCampaigns()).filter((campaign) => campaign.name === 'From a file');
    expect(created!.contacts).toEqual({ contact_ids: [second!.id, first!.id] });
    const rows = page.locator('main table').last().getByRole('row');
    expect(await rows.nth(1).textContent()).toContain(second!.phone);
    expect(await rows.nth(2).textContent()).toContain(first!.phone);
  });

  it('chooses the CSV when a file is read in, and never calls by consent over a CSV left filled', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const [listed] = await addContacts(env.org.key, 'manual', 1);
    await addContacts(env.org.key, 'manual', 1);
    await openForm(page, 'Only the file');
    const byConsent = page.getByLabel('By consent (below)');
    const byFile = page.getByLabel('From a CSV file (below)');
    expect(await byConsent.isChecked()).toBe(true);
    await page
      .locator('#csv-file')
      .setInputFiles({ name: 'list.csv', mimeType: 'text/csv', buffer: Buffer.from(`phone_e164\n${listed!.phone}\n`) });
    await expect.poll(() => byFile.isChecked()).toBe(true);

    // Switched back with the rows still there: refused, rather than every contact called.
    await byConsent.check();
    await submit(page);
    expect(await page.getByRole('alert').textContent()).toContain('The campaign was not created.');
    expect(await textOf(page, '#csv-error')).toContain('"By consent" is chosen');
    expect(await page.locator('#csv').getAttribute('aria-invalid')).toBe('true');
    expect((await liveCampaigns()).filter((campaign) => campaign.name === 'Only the file')).toEqual([]);
    await expectAccessible(page);

    await byFile.check();
    await submit(page);
    await page.getByRole('heading', { name: 'Only the file', level: 1 }).waitFor();
    const [created] = (await liveCampaigns()).filter((campaign) => campaign.name === 'Only the file');
    expect(created!.contacts).toEqual({ contact_ids: [listed!.id] });
  });

  it('shows each refused field next to it, in words, and keeps what was typed', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await addContacts(env.org.key, 'manual', 1);
    const before = (await liveCampaigns()).length;
    await openForm(page, 'Refused');
    // The browser's own checks pass these; the spec's refuse them.
    await page.locator('#w1_start').fill('9am');
    await page.locator('#w1_days').getByLabel('Sat').check();
    await page.locator('#w2_start').fill('10:00');
    await page.locator('#w2_end').fill('11:00');
    await submit(page);
    await page.getByRole('alert').waitFor();
    expect(await page.locator('#w1_start').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#w1_start').getAttribute('aria-describedby')).toBe('w1_start-error');
    expect(await textOf(page, '#w1_start-error')).toContain('9am');
    expect(await textOf(page, '#w2_days-error')).toContain('must hold at least 1 item');
    const summary = await textOf(page, '[role="alert"]');
    expect(summary).toContain('Window 2 opens');
    expect(summary).toContain('Window 3 days');
    expect(await page.locator('#w1_start').inputValue()).toBe('9am');
    expect(await page.getByLabel('Name').inputValue()).toBe('Refused');
    await expectAccessible(page);

    // A rule the service checks (a window must open before it closes) is shown the same way.
    await page.locator('#w1_start').fill('');
    await page.locator('#w2_start').fill('');
    await page.locator('#w2_end').fill('');
    await page.locator('#w1_days').getByLabel('Sat').uncheck();
    await page.locator('#w0_start').fill('18:00');
    await page.locator('#w0_end').fill('09:00');
    await submit(page);
    await page.getByRole('alert').waitFor();
    expect(await textOf(page, '#w0_end-error')).toContain("must be later than the window's start (18:00)");
    expect(await page.locator('#w1_start').getAttribute('aria-invalid')).toBeNull();
    expect(await liveCampaigns()).toHaveLength(before);

    // A name of white space alone passes the browser's `required`; the spec refuses it.
    await page.locator('#w0_start').fill('09:00');
    await page.locator('#w0_end').fill('18:00');
    await page.getByLabel('Name').fill(' \t ');
    await submit(page);
    await page.getByRole('alert').waitFor();
    expect(await textOf(page, '#name-error')).toContain('must hold at least one character that is not white space');
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBe('true');
    expect(await liveCampaigns()).toHaveLength(before);
  });

  it('shows counters, progress, contacts and calls, and pauses, resumes and cancels, audited', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const contacts = await addContacts(env.org.key, 'manual', 4);
    const campaign = await apiCampaign(
      env.org.key,
      'Counted',
      contacts.map((contact) => contact.id),
    );
    const call = await api<{ id: string }>(
      env.org.key,
      'POST',
      '/calls',
      { agent_id: env.org.agentId, to_e164: contacts[0]!.phone },
      201,
    );
    // As the dispatcher would leave them: one completed (with its call), one busy, one skipped.
    const set = (contactId: string, state: string, extra = sql``) =>
      sql`UPDATE campaign_contacts SET state = ${state} ${extra}
          WHERE campaign_id = ${campaign.id} AND contact_id = ${contactId}`.execute(env.database.db);
    await set(contacts[0]!.id, 'completed', sql`, attempts = 1, last_call_id = ${call.id}, last_outcome = 'completed'`);
    await sql`UPDATE calls SET campaign_id = ${campaign.id}, campaign_contact_id = ${contacts[0]!.id}, campaign_attempt = 1
              WHERE id = ${call.id}`.execute(env.database.db);
    // A call of no campaign, which the campaign's calls page leaves out.
    const outside = await api<{ id: string }>(
      env.org.key,
      'POST',
      '/calls',
      { agent_id: env.org.agentId, to_e164: contacts[3]!.phone },
      201,
    );
    await set(contacts[1]!.id, 'busy', sql`, attempts = 1, last_outcome = 'busy'`);
    await set(contacts[2]!.id, 'skipped', sql`, skip_reason = 'suppressed'`);

    await page.goto(`/dashboard/campaigns/${campaign.id}`);
    await page.getByRole('heading', { name: 'Counted', level: 1 }).waitFor();
    const bar = page.getByRole('progressbar');
    expect([await bar.getAttribute('value'), await bar.getAttribute('max')]).toEqual(['3', '4']);
    const main = await textOf(page, 'main');
    expect(main).toContain('3 of 4 contacts done (75%)');
    expect(main).toContain('Skipped 1 (1 on the do-not-call list, 0 by consent)');
    expect(main).toContain('Busy 1');
    expect(main).toContain('Pending 1');
    expect(main).toContain('Mon, Tue, Wed, Thu, Fri, Sat, Sun: 00:00–24:00');
    expect(await page.getByRole('row').filter({ hasText: contacts[2]!.phone }).textContent()).toContain(
      'skipped (do-not-call list)',
    );
    // An ending named once, not again as its own reason.
    await set(contacts[1]!.id, 'busy', sql`, last_call_id = ${call.id}, last_reason = 'busy'`);
    await page.reload();
    const busyRow = (await page.getByRole('row').filter({ hasText: contacts[1]!.phone }).textContent()) ?? '';
    expect(busyRow).toContain('busy');
    expect(busyRow).not.toContain('busy (busy)');
    await expectAccessible(page);
    await page.getByRole('link', { name: 'completed' }).click();
    await page.getByRole('heading', { name: 'Call', exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/calls/${call.id}`);

    // View calls: the calls page filtered by the campaign, which a status filter keeps.
    await page.goto(`/dashboard/campaigns/${campaign.id}`);
    await page.getByRole('link', { name: 'View calls' }).click();
    await page.getByRole('heading', { name: 'Calls', exact: true }).waitFor();
    expect(new URL(page.url()).searchParams.get('campaign_id')).toBe(campaign.id);
    expect(await textOf(page, 'main')).toContain('Calls of the campaign Counted.');
    expect(await page.getByRole('link', { name: call.id }).count()).toBe(1);
    expect(await page.getByRole('link', { name: outside.id }).count()).toBe(0);
    expect(await textOf(page, 'nav[aria-label="Pages"]')).toContain('(1 in all)');
    await expectAccessible(page);
    const { status } = await api<{ status: string }>(env.org.key, 'GET', `/calls/${call.id}`, undefined, 200);
    await page.getByLabel('Status').selectOption(status);
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('status')).toBe(status);
    expect(new URL(page.url()).searchParams.get('campaign_id')).toBe(campaign.id);
    expect(await page.getByRole('link', { name: call.id }).count()).toBe(1);
    await page.getByRole('link', { name: 'Counted' }).click();
    await page.getByRole('heading', { name: 'Counted', level: 1 }).waitFor();
    // A malformed or unknown campaign is not found.
    for (const id of ['not-a-uuid', outside.id]) {
      expect((await page.goto(`/dashboard/calls?campaign_id=${id}`))?.status(), id).toBe(404);
    }

    await page.goto(`/dashboard/campaigns/${campaign.id}`);
    await page.getByRole('button', { name: 'Pause' }).click();
    expect(await textOf(page, '[role="status"]')).toContain('Campaign paused');
    expect(await textOf(page, 'main')).toContain('paused (paused by request)');
    await expectAccessible(page);
    await page.getByRole('button', { name: 'Resume' }).click();
    expect(await textOf(page, '[role="status"]')).toContain('Campaign resumed');

    await page.getByRole('link', { name: 'Cancel campaign' }).click();
    await page.getByRole('heading', { name: 'Cancel campaign' }).waitFor();
    expect(await textOf(page, 'main')).toContain('Its 1 contact still waiting will not be called');
    await expectAccessible(page);
    // The way back does not read as the action.
    expect(await page.getByRole('link', { name: 'Keep the campaign' }).getAttribute('href')).toBe(
      `/dashboard/campaigns/${campaign.id}`,
    );
    await page.getByRole('button', { name: 'Cancel campaign' }).click();
    expect(await textOf(page, '[role="status"]')).toContain('Campaign canceled');
    expect(await page.getByRole('button', { name: 'Pause' }).count()).toBe(0);
    const after = await api<Campaign>(env.org.key, 'GET', `/campaigns/${campaign.id}`, undefined, 200);
    expect([after.status, after.counters.canceled]).toEqual(['canceled', 1]);

    // An ended campaign cannot be canceled again: a page saying so, and nothing audited.
    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const again = await page.request.post(`/dashboard/campaigns/${campaign.id}/cancel`, {
      form: { _csrf: csrf },
      headers: { Origin: env.app.baseUrl },
    });
    expect(again.status()).toBe(409);
    // Nor is it offered: the confirmation page says there is nothing to cancel.
    const offered = await page.goto(`/dashboard/campaigns/${campaign.id}/cancel`);
    expect(offered?.status()).toBe(409);
    expect(await textOf(page, 'main')).toContain('nothing left to cancel');
    expect(await page.getByRole('button', { name: 'Cancel campaign' }).count()).toBe(0);
    expect((await auditEntries()).filter((entry) => entry.target === campaign.id)).toEqual([
      { action: 'campaign.paused', target: campaign.id, livemode: true },
      { action: 'campaign.resumed', target: campaign.id, livemode: true },
      { action: 'campaign.canceled', target: campaign.id, livemode: true },
    ]);
  });

  it('keeps test-mode campaigns to test mode', async () => {
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    const { key: testKey } = await issueApiKey(env.database.db, env.org.orgId, { mode: 'test' });
    const twinId = await orgForMode(env.database.db, env.org.orgId, 'test');
    await addContacts(testKey, 'pre_call', 1);
    await page.goto('/dashboard/campaigns');
    await page.getByRole('button', { name: 'Test mode' }).click();
    await page.getByRole('region', { name: 'Test mode' }).waitFor();
    await openForm(page, 'Test-mode only');
    await submit(page);
    await page.getByRole('heading', { name: 'Test-mode only', level: 1 }).waitFor();
    await expectAccessible(page);
    const stored = await env.database.db
      .selectFrom('campaigns')
      .select(['id', 'org_id'])
      .where('name', '=', 'Test-mode only')
      .execute();
    expect(stored.map((row) => row.org_id)).toEqual([twinId]);
    expect((await auditEntries()).at(-1)).toEqual({
      action: 'campaign.created',
      target: stored[0]!.id,
      livemode: false,
    });

    await page.getByRole('link', { name: 'All campaigns' }).click();
    expect(await page.getByRole('row').filter({ hasText: 'Test-mode only' }).count()).toBe(1);
    await page.getByRole('button', { name: 'Test mode' }).click();
    await expect.poll(() => page.getByRole('region', { name: 'Test mode' }).count()).toBe(0);
    await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
    expect(await page.getByRole('row').filter({ hasText: 'Test-mode only' }).count()).toBe(0);
    const live = await page.goto(`/dashboard/campaigns/${stored[0]!.id}`);
    expect(live?.status()).toBe(404);
    const liveCalls = await page.goto(`/dashboard/calls?campaign_id=${stored[0]!.id}`);
    expect(liveCalls?.status()).toBe(404);
  });

  it('shows a hostile campaign name as text, isolated', async () => {
    const [contact] = await addContacts(env.org.key, 'manual', 1);
    const name = '<img src=x onerror="document.title=1">\u202Eevil';
    const campaign = await apiCampaign(env.org.key, name, [contact!.id]);
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    for (const path of [
      '/dashboard/campaigns',
      `/dashboard/campaigns/${campaign.id}`,
      `/dashboard/campaigns/${campaign.id}/cancel`,
    ]) {
      await page.goto(path);
      expect(await page.locator('main img').count(), path).toBe(0);
      const main = await textOf(page, 'main');
      expect(main, path).toContain('<img src=x onerror="document.title=1">');
      expect(main, path).toContain('<U+202E>evil');
      expect(await page.locator('main bdi').filter({ hasText: 'evil' }).count(), path).toBeGreaterThan(0);
    }
    // The campaign's own page is headed by its name; the tab's title shows it as text too.
    await page.goto(`/dashboard/campaigns/${campaign.id}`);
    expect(await page.locator('h1 bdi').textContent()).toBe(name.replace('\u202E', '<U+202E>'));
    expect(await page.title()).toBe('<img src=x onerror="document.title=1"><U+202E>evil · Campaign · Dashboard');
  });

  it('names a campaign of white space alone "Untitled campaign", so its link has text', async () => {
    const [contact] = await addContacts(env.org.key, 'manual', 1);
    // Such a name is refused since 2026-12-03; one stored before stays as it was.
    const campaign = await apiCampaign(env.org.key, 'Named blank later', [contact!.id]);
    await env.database.db.updateTable('campaigns').set({ name: ' \t ' }).where('id', '=', campaign.id).execute();
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'admin');
    await page.goto('/dashboard/campaigns');
    const link = page.getByRole('link', { name: 'Untitled campaign' }).first();
    expect(await link.getAttribute('href')).toBe(`/dashboard/campaigns/${campaign.id}`);
    await expectAccessible(page);
    await link.click();
    await page.getByRole('heading', { name: 'Untitled campaign', level: 1 }).waitFor();
    expect(await page.title()).toBe('Untitled campaign · Campaign · Dashboard');
    await expectAccessible(page);
  });

  it('lets a viewer read campaigns without controls, and refuses forced changes', async () => {
    const [contact] = await addContacts(env.org.key, 'manual', 1);
    const campaign = await apiCampaign(env.org.key, 'Viewed', [contact!.id]);
    const page = await signedInPage(browser, env.app.baseUrl, env.database.db, env.org.orgId, 'viewer');
    await page.getByRole('link', { name: 'Campaigns' }).click();
    await page.getByRole('link', { name: 'Viewed' }).click();
    await page.getByRole('heading', { name: 'Viewed', level: 1 }).waitFor();
    expect(await page.getByRole('button', { name: 'Pause' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Cancel campaign' }).count()).toBe(0);
    await expectAccessible(page);
    await page.goto('/dashboard/campaigns');
    expect(await page.getByRole('link', { name: 'New campaign' }).count()).toBe(0);
    expect((await page.goto('/dashboard/campaigns/new'))?.status()).toBe(403);
    expect((await page.goto(`/dashboard/campaigns/${campaign.id}/cancel`))?.status()).toBe(403);

    const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
    const before = await auditEntries();
    for (const [path, form] of [
      [`/dashboard/campaigns/${campaign.id}/pause`, { _csrf: csrf }],
      [`/dashboard/campaigns/${campaign.id}/cancel`, { _csrf: csrf }],
      ['/dashboard/campaigns/new', { _csrf: csrf, name: 'Forced', agent_id: env.org.agentId, source: 'filter' }],
    ] as const) {
      const answer = await page.request.post(path, { form, headers: { Origin: env.app.baseUrl } });
      expect(answer.status(), path).toBe(403);
    }
    expect(await auditEntries()).toEqual(before);
    expect((await api<Campaign>(env.org.key, 'GET', `/campaigns/${campaign.id}`, undefined, 200)).status).toBe(
      'scheduled',
    );
  });
});
