// The only reader of process.env: parses and validates the service configuration at start.
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  /** A PostgreSQL URL; null means "start the embedded PostgreSQL under dataDir". */
  databaseUrl: string | null;
  dataDir: string;
  embeddedPostgresPort: number;
  dbPoolSize: number;
  /** How long a query may wait for its answer before the client gives the connection up (client side). */
  dbQueryTimeoutMs: number;
  /** How long the server may run one statement (server side; below dbQueryTimeoutMs). */
  dbStatementTimeoutMs: number;
  /** How long a request may wait for a free or new pool connection. */
  dbConnectTimeoutMs: number;
  /** Run the hot queries as server-side prepared statements (off behind a pooler that cannot keep them). */
  dbNamedStatements: boolean;
  /** Seconds after which a pool connection is replaced once idle; 0: never. */
  dbConnectionMaxAgeS: number;
  /** Apply pending migrations when the service starts; when false, refuse to start on an older schema. */
  migrateOnStart: boolean;
  /** How long one migration statement may run, and how long to wait for another process's migration. */
  migrationStatementTimeoutMs: number;
  migrationLockTimeoutMs: number;
  logLevel: string;
  /** How long a looked-up API key is trusted before it is checked again (bounds revocation delay). */
  apiKeyCacheTtlMs: number;
  simulatorStepMs: number;
  /** Vapi's API key and webhook credential (Vapi is configured only with both), and its API's base URL. */
  vapiApiKey: string | undefined;
  vapiWebhookSecret: string | undefined;
  vapiBaseUrl: string;
  /** How long a call to a voice provider (placement, stop, lookup) may take before its outcome is unknown. */
  providerTimeoutMs: number;
  /** How long a call may go without news from its provider before it is looked up there. */
  providerReconcileAfterS: number;
  webhookPrivateAllowlist: string[];
  /**
   * Extra PEM CA certificates webhook deliveries trust beside the system store. Empty by default
   * (no env variable: production adds CAs with NODE_EXTRA_CA_CERTS); tests pass their throwaway CA.
   */
  webhookCaCerts: string[];
  /** Validate every response against the spec before sending it (on in tests). */
  validateResponses: boolean;
  /** How long a request may take before it is answered 503 (a test send or a deletion gets the delivery timeout on top). */
  requestTimeoutMs: number;
  /** How long a client may take to send a request's headers, and then its body (408 after that). */
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** How many proxies in front of the service append to X-Forwarded-For (0: the header is ignored). */
  trustProxyHops: number;
  /** Failed authentications one client address may make per minute before it gets 429. */
  authFailuresPerMinute: number;
  /** Webhook attempts in flight from one process: in all, for one org, for one endpoint. */
  webhookConcurrency: number;
  webhookConcurrencyPerOrg: number;
  webhookConcurrencyPerEndpoint: number;
  /** How long a claimed delivery stays leased (the bound on a deletion's wait for a process that died). */
  webhookLeaseMs: number;
  /** How often the delivery worker looks for retries that fall due and leases that lapsed. */
  webhookSweepIntervalMs: number;
  /** The longest the call-progress worker and the reconciliation job wait between looks for due work. */
  callPollIntervalMs: number;
  /** Test sends (POST /webhooks/{id}/test) in flight at once: for one org, and in one process. */
  testSendsPerOrg: number;
  testSendsPerProcess: number;
  /** Redeliveries (POST .../redeliver) one org may have pending at once, across processes. */
  redeliveriesPerOrg: number;
  /** CSV contact imports one process runs at once (one org runs one at a time, across processes). */
  contactImportsPerProcess: number;
  /** After SIGTERM, how long /readyz answers 503 while requests are still served, before the listener closes. */
  shutdownDrainMs: number;
  shutdownTimeoutMs: number;
  /** How long a child of `serve --processes` may take to start before it is killed and started again. */
  childStartTimeoutMs: number;
  /** The nice value a process running only background work lowers its CPU priority to (0: left as started). */
  workerNice: number;
  /** The public base URL printed at start and used in links (no trailing slash); derived by default. */
  publicBaseUrl: string;
  /** Whether PUBLIC_BASE_URL was set: only then do dashboard links use it, not the request's address. */
  publicBaseUrlSet: boolean;
  /** Connections the job engine's own pool may open (src/jobs/), beside dbPoolSize. */
  jobPoolSize: number;
  /** How often an idle job worker asks for new jobs of its kind. */
  jobPollIntervalMs: number;
  /** How often a worker looks for campaigns with work and no dispatch job waiting. */
  campaignSweepIntervalMs: number;
  /** How often the retention job runs, and how long history is kept. */
  retentionIntervalMs: number;
  deliveryRetentionDays: number;
  timelineRetentionDays: number;
  /** The port of the metrics server (/metrics, /healthz, /readyz); null: no metrics server. */
  metricsPort: number | null;
  metricsHost: string;
  /** How long a dashboard session lasts without use, and at most. */
  dashboardSessionIdleMs: number;
  dashboardSessionAbsoluteMs: number;
  /** How long audit log entries are kept. */
  auditRetentionDays: number;
}

/** A configuration value that cannot be used; its message names the variable. */
export class ConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  // Decimal digits only (spaces around them, as a CRLF env file leaves, are fine): Number() would also
  // take 0x1f, 1e4 and 0b11.
  const value = /^\s*\d+\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no'].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** The log levels pino knows, quietest last. */
const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

function oneOf(env: NodeJS.ProcessEnv, name: string, fallback: string, allowed: string[]): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw;
}

/** An absolute http(s) URL without its trailing slashes; throws ConfigError naming `name` otherwise. */
export function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http:// or https:// URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`${name} must be an absolute http:// or https:// URL, got "${raw}"`);
  }
  // Paths are appended to it: without a trailing slash, they never double one.
  return raw.replace(/\/+$/, '');
}

/**
 * A secret given either in the variable `name` itself or in the file `${name}_FILE` names (as Docker
 * and compose secrets mount them; a final line break is dropped), never both; undefined when neither.
 * A file that holds nothing is refused: a secret mounted empty must not pass for no secret (for
 * DATABASE_URL, the embedded database).
 */
function secret(name: string, value: string | undefined, file: string | undefined): string | undefined {
  if (!file) return value || undefined;
  if (value) throw new ConfigError(`set ${name} or ${name}_FILE, not both`);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new ConfigError(
      `${name}_FILE names "${file}", which cannot be read (${(error as NodeJS.ErrnoException).code})`,
    );
  }
  if (text.trim() === '') throw new ConfigError(`${name}_FILE names "${file}", which is empty`);
  return text;
}

/** Reads the configuration from the environment; throws ConfigError on an unusable value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const databaseUrl = secret('DATABASE_URL', env.DATABASE_URL, env.DATABASE_URL_FILE) ?? null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must be a postgres:// or postgresql:// URL');
  }
  const allowlist = (env.WEBHOOK_PRIVATE_ALLOWLIST ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const cidr of allowlist) {
    if (!/^[0-9a-fA-F:.]+\/\d{1,3}$/.test(cidr)) {
      throw new ConfigError(`WEBHOOK_PRIVATE_ALLOWLIST entries must be CIDR ranges, got "${cidr}"`);
    }
  }
  const statementTimeout = integer(env, 'DB_STATEMENT_TIMEOUT_MS', 5_000, 100, 600_000);
  if (statementTimeout >= integer(env, 'DB_QUERY_TIMEOUT_MS', 6_000, 100, 600_000)) {
    throw new ConfigError(
      'DB_STATEMENT_TIMEOUT_MS must be below DB_QUERY_TIMEOUT_MS, so the server cancels a slow statement first',
    );
  }
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    port,
    host,
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    embeddedPostgresPort: integer(env, 'EMBEDDED_PG_PORT', 54329, 1, 65535),
    dbPoolSize: integer(env, 'DB_POOL_SIZE', 10, 1, 200),
    dbQueryTimeoutMs: integer(env, 'DB_QUERY_TIMEOUT_MS', 6_000, 100, 600_000),
    dbStatementTimeoutMs: integer(env, 'DB_STATEMENT_TIMEOUT_MS', 5_000, 100, 600_000),
    dbConnectTimeoutMs: integer(env, 'DB_CONNECT_TIMEOUT_MS', 3_000, 100, 60_000),
    dbNamedStatements: boolean(env, 'DB_NAMED_STATEMENTS', true),
    dbConnectionMaxAgeS: integer(env, 'DB_CONNECTION_MAX_AGE_S', 1_800, 0, 86_400),
    migrateOnStart: boolean(env, 'MIGRATE_ON_START', true),
    migrationStatementTimeoutMs: integer(env, 'MIGRATION_STATEMENT_TIMEOUT_MS', 600_000, 1_000, 86_400_000),
    migrationLockTimeoutMs: integer(env, 'MIGRATION_LOCK_TIMEOUT_MS', 60_000, 1_000, 3_600_000),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', LOG_LEVELS),
    apiKeyCacheTtlMs: integer(env, 'API_KEY_CACHE_TTL_MS', 10_000, 0, 30_000),
    simulatorStepMs: integer(env, 'SIMULATOR_STEP_MS', 1000, 1, 600_000),
    vapiApiKey: secret('VAPI_API_KEY', env.VAPI_API_KEY, env.VAPI_API_KEY_FILE),
    vapiWebhookSecret: secret('VAPI_WEBHOOK_SECRET', env.VAPI_WEBHOOK_SECRET, env.VAPI_WEBHOOK_SECRET_FILE),
    vapiBaseUrl: httpUrl('VAPI_BASE_URL', env.VAPI_BASE_URL || 'https://api.vapi.ai'),
    providerTimeoutMs: integer(env, 'PROVIDER_TIMEOUT_MS', 8_000, 100, 120_000),
    providerReconcileAfterS: integer(env, 'PROVIDER_RECONCILE_AFTER_S', 120, 1, 86_400),
    webhookPrivateAllowlist: allowlist,
    webhookCaCerts: [],
    validateResponses: boolean(env, 'VALIDATE_RESPONSES', false),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 10_000, 100, 120_000),
    headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 120_000),
    bodyTimeoutMs: integer(env, 'BODY_TIMEOUT_MS', 10_000, 100, 120_000),
    trustProxyHops: integer(env, 'TRUST_PROXY_HOPS', 0, 0, 10),
    authFailuresPerMinute: integer(env, 'AUTH_FAILURES_PER_MINUTE', 60, 1, 1_000_000),
    webhookConcurrency: integer(env, 'WEBHOOK_CONCURRENCY', 1024, 1, 10_000),
    webhookConcurrencyPerOrg: integer(env, 'WEBHOOK_CONCURRENCY_PER_ORG', 96, 1, 10_000),
    webhookConcurrencyPerEndpoint: integer(env, 'WEBHOOK_CONCURRENCY_PER_ENDPOINT', 4, 1, 100),
    webhookLeaseMs: integer(env, 'WEBHOOK_LEASE_MS', 15_000, 13_000, 600_000),
    webhookSweepIntervalMs: integer(env, 'WEBHOOK_SWEEP_INTERVAL_MS', 1_000, 50, 60_000),
    callPollIntervalMs: integer(env, 'CALL_POLL_INTERVAL_MS', 200, 10, 60_000),
    testSendsPerOrg: integer(env, 'TEST_SENDS_PER_ORG', 4, 1, 100),
    testSendsPerProcess: integer(env, 'TEST_SENDS_PER_PROCESS', 32, 1, 1_000),
    redeliveriesPerOrg: integer(env, 'REDELIVERIES_PER_ORG', 100, 1, 100_000),
    contactImportsPerProcess: integer(env, 'CONTACT_IMPORTS_PER_PROCESS', 2, 1, 100),
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', 2_000, 0, 60_000),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 120_000),
    childStartTimeoutMs: integer(env, 'CHILD_START_TIMEOUT_MS', 60_000, 1_000, 600_000),
    workerNice: integer(env, 'WORKER_NICE', 10, 0, 19),
    publicBaseUrl: env.PUBLIC_BASE_URL
      ? httpUrl('PUBLIC_BASE_URL', env.PUBLIC_BASE_URL)
      : `http://${urlHost.includes(':') ? `[${urlHost}]` : urlHost}:${port}`,
    publicBaseUrlSet: Boolean(env.PUBLIC_BASE_URL),
    jobPoolSize: integer(env, 'JOB_POOL_SIZE', 4, 2, 50),
    jobPollIntervalMs: integer(env, 'JOB_POLL_INTERVAL_MS', 1_000, 500, 60_000),
    campaignSweepIntervalMs: integer(env, 'CAMPAIGN_SWEEP_INTERVAL_MS', 30_000, 1_000, 3_600_000),
    retentionIntervalMs: integer(env, 'RETENTION_INTERVAL_MS', 3_600_000, 1_000, 86_400_000),
    deliveryRetentionDays: integer(env, 'DELIVERY_RETENTION_DAYS', 30, 1, 3650),
    timelineRetentionDays: integer(env, 'TIMELINE_RETENTION_DAYS', 90, 1, 3650),
    metricsPort: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 0, 65535) : null,
    metricsHost: env.METRICS_HOST || host,
    dashboardSessionIdleMs: integer(env, 'DASHBOARD_SESSION_IDLE_MINUTES', 720, 1, 43_200) * 60_000,
    dashboardSessionAbsoluteMs: integer(env, 'DASHBOARD_SESSION_MAX_HOURS', 168, 1, 8_760) * 3_600_000,
    auditRetentionDays: integer(env, 'AUDIT_RETENTION_DAYS', 365, 1, 3650),
  };
}
