// The only reader of process.env: parses and validates the service configuration at start.
import path from 'node:path';

export interface Config {
  port: number;
  host: string;
  /** A PostgreSQL URL; null means "start the embedded PostgreSQL under dataDir". */
  databaseUrl: string | null;
  dataDir: string;
  embeddedPostgresPort: number;
  dbPoolSize: number;
  logLevel: string;
  /** How long a looked-up API key is trusted before it is checked again (bounds revocation delay). */
  apiKeyCacheTtlMs: number;
  simulatorStepMs: number;
  webhookPrivateAllowlist: string[];
  /**
   * Extra PEM CA certificates webhook deliveries trust beside the system store. Empty by default
   * (no env variable: production adds CAs with NODE_EXTRA_CA_CERTS); tests pass their throwaway CA.
   */
  webhookCaCerts: string[];
  /** Validate every response against the spec before sending it (on in tests). */
  validateResponses: boolean;
  shutdownTimeoutMs: number;
  /** The public base URL printed at start and used in links; derived from host and port by default. */
  publicBaseUrl: string;
}

/** A configuration value that cannot be used; its message names the variable. */
export class ConfigError extends Error {}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
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

/** Reads the configuration from the environment; throws ConfigError on an unusable value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const databaseUrl = env.DATABASE_URL || null;
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
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    port,
    host,
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR || '.data'),
    embeddedPostgresPort: integer(env, 'EMBEDDED_PG_PORT', 54329, 1, 65535),
    dbPoolSize: integer(env, 'DB_POOL_SIZE', 10, 1, 200),
    logLevel: env.LOG_LEVEL || 'info',
    apiKeyCacheTtlMs: integer(env, 'API_KEY_CACHE_TTL_MS', 10_000, 0, 30_000),
    simulatorStepMs: integer(env, 'SIMULATOR_STEP_MS', 1000, 1, 600_000),
    webhookPrivateAllowlist: allowlist,
    webhookCaCerts: [],
    validateResponses: boolean(env, 'VALIDATE_RESPONSES', false),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 120_000),
    publicBaseUrl: env.PUBLIC_BASE_URL || `http://${urlHost.includes(':') ? `[${urlHost}]` : urlHost}:${port}`,
  };
}
