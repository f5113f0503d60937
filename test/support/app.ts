// Starts the real app (real Koa stack, real PostgreSQL) on a loopback port for black-box tests.
import createClient, { type Client } from 'openapi-fetch';
import type { Document } from 'openapi-backend';
import type { paths } from '../../generated/openapi.js';
import { createApp, requestListener } from '../../src/app.js';
import { startHttpServer } from '../../src/http/server.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { closeAppDeps, createAppDeps, type AppDeps } from '../../src/app-deps.js';
import type { Clock } from '../../src/clock.js';
import type { ProviderModule } from '../../src/calls/provider/types.js';
import type pg from 'pg';
import { startWorkers, type BackgroundWorker } from '../../src/workers.js';
import type { Db } from '../../src/database/connect.js';
import type { TestDatabase } from './database.js';
import { createAgent, createOrg } from '../../src/orgs/service.js';
import { issueApiKey } from '../../src/orgs/api-keys.js';
import { orgForMode, resetTestCredits, type Mode } from '../../src/orgs/modes.js';
import { inject } from 'vitest';
import { RecordedResponse, recordResponses } from './contract-recorder.js';
import { prismFetch } from './prism-fetch.js';

/** A clock tests can move by hand; starts at the real time. */
export class ManualClock implements Clock {
  private current: number;
  constructor(start = Date.now()) {
    this.current = start;
  }
  now(): Date {
    return new Date(this.current);
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

export interface TestApp {
  baseUrl: string;
  apiUrl: string;
  deps: AppDeps;
  /** fetch for API requests: through the Prism judge under `npm run test:prism`, else plain fetch. */
  fetch: typeof fetch;
  /** An openapi-fetch client for the API authenticated with `key`. */
  client(key: string | null): Client<paths>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  config?: Partial<Config>;
  clock?: Clock;
  workers?: boolean;
  /** Where the app's JSON log lines go (at config.logLevel); nowhere by default. */
  logStream?: { write(line: string): void };
  /** The spec the API serves, when a test needs a variant of the published one. */
  document?: Document;
  /** Voice providers beside the registry's (a test's own provider). */
  providers?: readonly ProviderModule[];
  /** The pool behind the database's Kysely instance, whose use the app's metrics then report. */
  pool?: pg.Pool;
}

/** The database a test app runs on: its Kysely instance and the URL it connects to (for LISTEN). */
export type TestAppDatabase = Pick<TestDatabase, 'db' | 'url'>;

/**
 * Builds and starts an app over `database` on 127.0.0.1 with response validation on. Its config's
 * databaseUrl is the database's URL, as src/main.ts sets it, so the delivery worker can LISTEN.
 */
export async function startTestApp({ db, url }: TestAppDatabase, options: TestAppOptions = {}): Promise<TestApp> {
  const config: Config = {
    ...loadConfig({}),
    databaseUrl: url,
    port: 0,
    logLevel: 'silent',
    apiKeyCacheTtlMs: 0,
    // Tests send many bad keys from 127.0.0.1; the tests of this limit set their own.
    authFailuresPerMinute: 1_000_000,
    simulatorStepMs: 5,
    validateResponses: true,
    shutdownTimeoutMs: 2_000,
    ...options.config,
  };
  const deps = createAppDeps({
    db,
    config,
    logger: createLogger(config.logLevel, options.logStream),
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.providers ? { providers: options.providers } : {}),
    ...(options.pool ? { pool: options.pool } : {}),
  });
  const app = await createApp(deps, options.document);
  const server = await startHttpServer(
    recordResponses(requestListener(app)),
    { ...config, host: '127.0.0.1', port: 0 },
    deps.readiness,
    deps.logger,
    { ServerResponse: RecordedResponse },
  );
  const { port } = server;
  const workers: BackgroundWorker[] = options.workers === false ? [] : await startWorkers(deps);
  const baseUrl = `http://127.0.0.1:${port}`;
  const apiUrl = `${baseUrl}/api/v1`;
  const prismUrl = inject('prismUrl');
  const apiFetch = prismUrl ? prismFetch(apiUrl, prismUrl) : fetch;
  return {
    baseUrl,
    apiUrl,
    deps,
    fetch: apiFetch,
    client: (key) =>
      createClient<paths>({ baseUrl: apiUrl, fetch: apiFetch, headers: key ? { Authorization: `Bearer ${key}` } : {} }),
    close: async () => {
      await Promise.all(workers.map((worker) => worker.stop(2_000)));
      await closeAppDeps(deps);
      await server.close();
    },
  };
}

export interface TestOrg {
  /** The org the key's data lives in: the live org, or its test twin for a test key. */
  orgId: string;
  agentId: string;
  key: string;
}

/**
 * Creates an org (starter plan, 100000 paise by default) with one agent and one API key, live by
 * default. With `mode: 'test'` the key is a test key, `credits` is the test balance (the live one
 * stays 0) and `orgId` is the test twin's.
 */
export async function createTestOrg(
  db: Db,
  options: {
    credits?: number;
    planId?: string | null;
    mode?: Mode;
    agent?: Parameters<typeof createAgent>[1] extends infer A ? Partial<A> : never;
  } = {},
): Promise<TestOrg> {
  const mode = options.mode ?? 'live';
  const credits = options.credits ?? 100_000;
  const org = await createOrg(db, {
    name: `Test org ${Math.random().toString(36).slice(2, 8)}`,
    creditsPaise: mode === 'live' ? credits : 0,
    planId: options.planId === undefined ? 'starter' : options.planId,
  });
  if (mode === 'test') await resetTestCredits(db, org.id, credits);
  const agent = await createAgent(db, { name: 'Test agent', ...options.agent, orgId: org.id });
  const { key } = await issueApiKey(db, org.id, { mode });
  return { orgId: await orgForMode(db, org.id, mode), agentId: agent.id, key };
}

/** What rawRequest answers: the status, the headers and the body parsed as JSON (else its text, or null). */
export interface RawAnswer<T> {
  status: number;
  headers: Headers;
  body: T;
}

/**
 * A raw fetch against the app, for requests a generated client cannot make (bad JSON, odd headers). The
 * body has the type the caller declares for it (`unknown` when it declares none).
 */
export async function rawRequest<T = unknown>(
  app: TestApp,
  method: string,
  path: string,
  init: { headers?: Record<string, string>; body?: string } = {},
): Promise<RawAnswer<T>> {
  const response = await app.fetch(`${app.apiUrl}${path}`, { method, headers: init.headers, body: init.body });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = text;
  }
  return { status: response.status, headers: response.headers, body: body as T };
}
