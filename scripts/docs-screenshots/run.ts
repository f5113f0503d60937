// `npm run docs:screenshots`: redraws docs/dashboard/*.png. Starts the service on 127.0.0.1 only, over a
// database of its own (a new database on DATABASE_URL's server, dropped at the end, or without
// DATABASE_URL an embedded PostgreSQL in a temporary directory), with an HTTPS webhook receiver on
// 127.0.0.1 and calls on a fast simulator; makes the demo org (./demo.ts); signs its admin in through the
// invite link in Debian's headless Chromium (/usr/bin/chromium, driven by playwright-core) and takes each
// page at 1280 px wide, the long ones down to MAX_HEIGHT.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { launchChromium } from '../chromium.js';
import { createApp, requestListener } from '../../src/app.js';
import { closeAppDeps, createAppDeps } from '../../src/app-deps.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type OpenDatabase } from '../../src/database/open.js';
import { startHttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { startHttpsReceiver, type HttpsReceiver } from '../../src/tools/https-receiver.js';
import { makeLocalTls } from '../../src/tools/local-ca.js';
import { startWorkers } from '../../src/workers.js';
import { DEMO_PASSWORD, makeDemo, type Demo } from './demo.js';

const OUT_DIR = path.resolve('docs/dashboard');
const VIEWPORT = { width: 1280, height: 800 };
/** The tallest a screenshot of a long page is cut at, in CSS pixels. */
const MAX_HEIGHT = 1800;
/** The whole run is stopped past this, whatever it is waiting for. */
const WATCHDOG_MS = 5 * 60_000;

/** The pages taken, in live mode: the file name (without .png) and the path, from the demo's ids. */
const SHOTS: Array<[string, (demo: Demo) => string]> = [
  ['overview', () => '/dashboard'],
  ['api-keys', () => '/dashboard/keys'],
  ['webhooks', () => '/dashboard/webhooks'],
  ['delivery-log', (demo) => `/dashboard/webhooks/${demo.endpointId}`],
  ['calls', () => '/dashboard/calls'],
  ['call', (demo) => `/dashboard/calls/${demo.callId}`],
  ['contacts', () => '/dashboard/contacts'],
  ['campaigns', () => '/dashboard/campaigns'],
  ['campaign', (demo) => `/dashboard/campaigns/${demo.campaignId}`],
  ['do-not-call', () => '/dashboard/suppressions'],
  ['members', () => '/dashboard/members'],
  ['audit', () => '/dashboard/audit'],
];

/** A database of the run's own, migrated, and how to get rid of it. */
async function ownDatabase(config: Config): Promise<{ open: OpenDatabase; remove(): Promise<void> }> {
  if (!config.databaseUrl) {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'docs-screenshots-'));
    // Under root the embedded PostgreSQL runs as its own user, who must enter the directory to keep the data there.
    chmodSync(dataDir, 0o755);
    const remove = () => {
      rmSync(dataDir, { recursive: true, force: true });
      return Promise.resolve();
    };
    return { open: await openedOrRemoved({ ...config, dataDir }, remove), remove };
  }
  const name = `docs_screenshots_${randomBytes(5).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: config.databaseUrl! });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(config.databaseUrl);
  url.pathname = `/${name}`;
  const remove = () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  return { open: await openedOrRemoved({ ...config, databaseUrl: url.toString() }, remove), remove };
}

/** Opens and migrates the database `config` names; on failure runs `remove` before throwing. */
async function openedOrRemoved(config: Config, remove: () => Promise<void>): Promise<OpenDatabase> {
  try {
    return await openDatabase(config, { migrations: 'apply' });
  } catch (error) {
    await remove();
    throw error;
  }
}

/** Saves the page shown as `name`.png: the whole page, cut at MAX_HEIGHT. */
async function shoot(page: Page, name: string): Promise<void> {
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  await page.screenshot({
    path: path.join(OUT_DIR, `${name}.png`),
    fullPage: true,
    clip: { x: 0, y: 0, width: VIEWPORT.width, height: Math.min(Math.max(height, VIEWPORT.height), MAX_HEIGHT) },
  });
  process.stderr.write(`[docs:screenshots] ${name}.png\n`);
}

/** Waits until the receiver has had no request for `quietMs` (the deliveries of the demo's calls are done). */
async function settled(lastRequestAt: () => number, quietMs: number): Promise<void> {
  while (Date.now() - lastRequestAt() < quietMs) await new Promise((resolve) => setTimeout(resolve, 100));
}

/** Starts everything, takes the screenshots and stops everything it started, in reverse order. */
async function main(): Promise<void> {
  const config = loadConfig({
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
    // Not the port of `npm start`'s embedded server, which may be running.
    EMBEDDED_PG_PORT: process.env.EMBEDDED_PG_PORT || '54338',
    LOG_LEVEL: 'warn',
    SIMULATOR_STEP_MS: '5',
    CALL_POLL_INTERVAL_MS: '20',
    WEBHOOK_PRIVATE_ALLOWLIST: '127.0.0.0/8',
  });
  const database = await ownDatabase(config);
  // Run in order: the newest first, the database last.
  const cleanups: Array<() => Promise<unknown>> = [() => database.open.close(), () => database.remove()];
  try {
    const tls = await makeLocalTls({ caName: 'Docs screenshots CA' });
    let lastRequestAt = Date.now();
    let requests = 0;
    // Every fourth delivery fails, so the delivery log shows both outcomes.
    const receiver: HttpsReceiver = await startHttpsReceiver({
      tls,
      answer: (_received, _request, response) => {
        lastRequestAt = Date.now();
        requests += 1;
        const failed = requests % 4 === 0;
        response.writeHead(failed ? 503 : 200, { 'Content-Type': 'text/plain' });
        response.end(failed ? 'busy, try again later' : 'ok');
      },
    });
    cleanups.unshift(() => receiver.close());

    const serviceConfig: Config = {
      ...config,
      databaseUrl: database.open.url,
      host: '127.0.0.1',
      port: 0,
      webhookCaCerts: [tls.caCert],
    };
    const deps = createAppDeps({
      db: database.open.db,
      config: serviceConfig,
      logger: createLogger(serviceConfig.logLevel),
      pool: database.open.pool,
    });
    const server = await startHttpServer(
      requestListener(await createApp(deps)),
      serviceConfig,
      deps.readiness,
      deps.logger,
    );
    cleanups.unshift(
      () => server.close(),
      () => closeAppDeps(deps),
    );
    const workers = await startWorkers(deps);
    cleanups.unshift(() => Promise.all(workers.map((worker) => worker.stop(2_000))));
    const baseUrl = `http://127.0.0.1:${server.port}`;

    const demo = await makeDemo(database.open.db, `${baseUrl}/api/v1`, receiver.origin);
    await settled(() => lastRequestAt, 1_500);

    const browser = await launchChromium();
    cleanups.unshift(() => browser.close());
    const context = await browser.newContext({
      baseURL: baseUrl,
      viewport: VIEWPORT,
      locale: 'en-IN',
      timezoneId: 'Asia/Kolkata',
    });
    const page = await context.newPage();
    await page.goto(demo.adminLink);
    await page.getByLabel('New password').fill(DEMO_PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    for (const [name, pathOf] of SHOTS) {
      await page.goto(pathOf(demo));
      await shoot(page, name);
    }
    // The overview again with the test-mode switch on: the banner, the test twin's calls and credits.
    await page.goto('/dashboard');
    await page.getByRole('button', { name: 'Test mode' }).click();
    await page.getByRole('region', { name: 'Test mode' }).waitFor();
    await shoot(page, 'test-mode');
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
}

setTimeout(() => {
  process.stderr.write(`[docs:screenshots] stopped: still running after ${WATCHDOG_MS / 1000} s\n`);
  process.exit(1);
}, WATCHDOG_MS).unref();
main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('docs:screenshots failed:', error);
    process.exit(1);
  },
);
