// The published spec routes and the Redoc page, rendered in headless Chromium with no internet access.
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Page } from 'playwright-core';
import { launchChromium } from '../scripts/chromium.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startTestApp, type TestApp } from './support/app.js';
import { commandOf, skipWithout } from './support/toolchains.js';
import { expectAccessible } from './support/dashboard.js';
import { jsonBody } from './support/json.js';

const CHROMIUM = commandOf('chromium');
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

type Operation = { operationId?: string; summary?: string; callbacks?: Record<string, Record<string, PathItem>> };
type PathItem = Partial<Record<(typeof HTTP_METHODS)[number], Operation>>;
interface Expected {
  /** Where it is documented: `operation/<operationId>` (a callback is shown inside its parent operation). */
  section: string;
  /** How the test names it in failure messages. */
  label: string;
  summary: string | undefined;
  callback: boolean;
}

/** Every operation in the spec (paths, webhooks and callbacks) with the summary the page must show. */
function expectedOperations(): Expected[] {
  const spec = parse(readFileSync(new URL('../spec/openapi.yaml', import.meta.url), 'utf8')) as {
    paths?: Record<string, PathItem>;
    webhooks?: Record<string, PathItem>;
  };
  const found: Expected[] = [];
  const visit = (items: Record<string, PathItem> | undefined, where: string) => {
    for (const [key, item] of Object.entries(items ?? {})) {
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const label = `${where} ${method.toUpperCase()} ${key}`;
        found.push({
          section: `operation/${operation.operationId}`,
          label,
          summary: operation.summary,
          callback: false,
        });
        for (const [name, callback] of Object.entries(operation.callbacks ?? {})) {
          for (const [expression, callbackItem] of Object.entries(callback)) {
            for (const callbackMethod of HTTP_METHODS) {
              const callbackOperation = callbackItem[callbackMethod];
              if (!callbackOperation) continue;
              found.push({
                section: `operation/${operation.operationId}`,
                label: `${label} callback ${name} ${callbackMethod.toUpperCase()} ${expression}`,
                summary: callbackOperation.summary,
                callback: true,
              });
            }
          }
        }
      }
    }
  };
  visit(spec.paths, 'path');
  visit(spec.webhooks, 'webhook');
  return found;
}

describe('API reference page', () => {
  let database: TestDatabase;
  let app: TestApp;
  let origin: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    app = await startTestApp(database, { workers: false });
    origin = app.baseUrl;
  });

  afterAll(async () => {
    await app?.close();
    await database?.drop();
  });

  it('serves the published document, generated/openapi.json and generated/openapi.yaml, without authentication', async () => {
    const json = await fetch(`${origin}/api/v1/openapi.json`);
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(await json.text()).toBe(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8'));

    const yaml = await fetch(`${origin}/api/v1/openapi.yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.headers.get('content-type')).toMatch(/^application\/yaml\b/);
    const yamlText = await yaml.text();
    expect(yamlText).toBe(readFileSync(new URL('../generated/openapi.yaml', import.meta.url), 'utf8'));
    // YAML 1.1 and 1.2 parsers read the same document as the JSON (no timestamp taken for a date).
    const published = JSON.parse(
      readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8'),
    ) as unknown;
    expect(parse(yamlText, { version: '1.1' })).toEqual(published);
    expect(parse(yamlText, { version: '1.2' })).toEqual(published);
  });

  it('answers GET / with where the docs page, the spec and the API are, in the body and a Link header', async () => {
    const response = await fetch(`${origin}/`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
    const index =
      await jsonBody<Record<'docs_url' | 'openapi_json_url' | 'openapi_yaml_url' | 'api_base_url', string>>(response);
    expect(index).toEqual({
      name: 'voice-call-api',
      docs_url: '/docs',
      openapi_json_url: '/api/v1/openapi.json',
      openapi_yaml_url: '/api/v1/openapi.yaml',
      api_base_url: '/api/v1',
    });
    expect(response.headers.get('link')).toBe(
      '</docs>; rel="service-doc"; type="text/html", ' +
        '</api/v1/openapi.json>; rel="service-desc"; type="application/json", ' +
        '</api/v1/openapi.yaml>; rel="service-desc"; type="application/yaml"',
    );

    // Each link leads where it says, resolved against the URL of the answer.
    const follow = (url: string) => fetch(new URL(url, response.url));
    const docs = await follow(index.docs_url);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html\b/);
    const json = await follow(index.openapi_json_url);
    expect(((await json.json()) as { openapi: string }).openapi).toMatch(/^3\.1\./);
    const yaml = await follow(index.openapi_yaml_url);
    expect((parse(await yaml.text()) as { openapi: string }).openapi).toMatch(/^3\.1\./);
    const api = await follow(`${index.api_base_url}/calls`);
    expect(api.status).toBe(401);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });

  it('serves the Redoc bundle from the installed package, without its remote logo', async () => {
    const response = await fetch(`${origin}/docs/redoc.standalone.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/javascript\b/);
    const bundle = await response.text();
    expect(bundle.length).toBeGreaterThan(100_000);
    expect(bundle.includes('cdn.redoc.ly'), "the bundle still names Redocly's CDN").toBe(false);
  });

  it.skipIf(skipWithout('chromium'))(
    'renders every operation summary from spec/openapi.yaml, requesting nothing off its origin and logging no error',
    async () => {
      const expected = expectedOperations();
      expect(expected.filter((operation) => !operation.callback).length).toBeGreaterThan(0);
      for (const operation of expected) expect(operation.summary, `${operation.label} has no summary`).toBeTruthy();

      // Under CI a missing browser fails this test (skipWithout skips it only on a developer's machine).
      expect(
        existsSync(CHROMIUM),
        `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium)`,
      ).toBe(true);
      const browser = await launchChromium();
      try {
        await checkPage(await browser.newPage(), expected);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );

  async function checkPage(page: Page, expected: Expected[]): Promise<void> {
    const pageErrors: string[] = [];
    const consoleErrors: string[] = [];
    const requested: string[] = [];
    const failed: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    // Every request the page starts, answered or not (one the CSP refuses also shows as a console error).
    page.on('request', (request) => requested.push(request.url()));
    page.on('requestfailed', (request) => failed.push(`${request.url()}: ${request.failure()?.errorText}`));

    const response = await page.goto(`${origin}/docs`);
    expect(response?.status()).toBe(200);
    // Redoc replaces its loading indicator with the operation sections once the spec is parsed.
    await page.locator('[data-section-id^="operation/"]').first().waitFor({ timeout: 30_000 });

    const sections = await page.$$eval('[data-section-id^="operation/"]', (elements) =>
      elements.map((element) => ({
        id: element.getAttribute('data-section-id') ?? '',
        // The heading's own text, without badges such as Redoc's "Webhook" label.
        heading: Array.from(element.querySelector('h2')?.childNodes ?? [])
          .filter((node) => node.nodeType === Node.TEXT_NODE)
          .map((node) => node.textContent)
          .join('')
          .trim(),
        text: (element as HTMLElement).innerText,
      })),
    );
    const byId = new Map(sections.map((section) => [section.id, section]));
    for (const operation of expected) {
      const section = byId.get(operation.section);
      expect.soft(section, `${operation.label}: no rendered section ${operation.section}`).toBeDefined();
      if (operation.callback) {
        expect.soft(section?.text, `${operation.label}: summary not shown`).toContain(operation.summary);
      } else {
        expect.soft(section?.heading, `${operation.label}: heading`).toBe(operation.summary);
      }
    }

    // The Webhooks section of the introduction, with the tested verification code in each language.
    const webhooks = page.locator('[data-section-id="section/Webhooks"]');
    expect(await webhooks.count(), 'no rendered section section/Webhooks').toBe(1);
    const webhooksText = await webhooks.innerText();
    for (const snippet of ['x-svc-signature', 'expire_previous=true', 'createHmac', 'hmac.new', 'hmac.New']) {
      expect.soft(webhooksText, `the Webhooks section lacks ${snippet}`).toContain(snippet);
    }

    // Let late requests (lazy images, the search worker) start before judging.
    await page.waitForLoadState('networkidle');
    expect(pageErrors).toEqual([]);
    expect(consoleErrors).toEqual([]);
    expect(failed).toEqual([]);
    const urls = new Set(requested);
    for (const path of ['/docs', '/docs/redoc.standalone.js', '/api/v1/openapi.json']) {
      expect(urls, `the page did not request ${path}`).toContain(`${origin}${path}`);
    }
    const offOrigin = [...urls].filter(
      (url) => !['data:', 'blob:'].includes(new URL(url).protocol) && new URL(url).origin !== origin,
    );
    expect(offOrigin).toEqual([]);
  }

  it.skipIf(skipWithout('chromium'))(
    'passes axe: no serious or critical accessibility violation',
    async () => {
      const browser = await launchChromium();
      try {
        // axe is added as a script of its own, which the page's policy would refuse: this page alone bypasses it.
        const page = await browser.newPage({ bypassCSP: true });
        await page.goto(`${origin}/docs`);
        await page.locator('[data-section-id^="operation/"]').first().waitFor({ timeout: 30_000 });
        await expectAccessible(page);
      } finally {
        await browser.close();
      }
    },
    60_000,
  );
});
