// Settings read from the environment: an unusable value stops the service at start with a message that
// names the variable and what it accepts (exit status 2), never a library's own error later.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createTestDatabase } from './support/database.js';
import { runAdmin } from './support/cli.js';

describe('loadConfig', () => {
  it.each([
    [
      { LOG_LEVEL: 'verbose' },
      'LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "verbose"',
    ],
    [{ PORT: '0x0d67' }, 'PORT must be an integer from 0 to 65535, got "0x0d67"'],
    [{ REQUEST_TIMEOUT_MS: '1e4' }, 'REQUEST_TIMEOUT_MS must be an integer from 100 to 120000, got "1e4"'],
    [{ PUBLIC_BASE_URL: 'notaurl' }, 'PUBLIC_BASE_URL must be an absolute http:// or https:// URL, got "notaurl"'],
    [{ PUBLIC_BASE_URL: 'ftp://example.com' }, 'PUBLIC_BASE_URL must be an absolute http:// or https:// URL'],
  ])('refuses %o', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('takes the values it documents', () => {
    const config = loadConfig({
      LOG_LEVEL: 'warn',
      PORT: '8080',
      METRICS_PORT: '8080',
      METRICS_HOST: '127.0.0.2',
      PUBLIC_BASE_URL: 'https://api.example.com:8443/',
      // A CRLF env file leaves a carriage return after the value.
      DB_POOL_SIZE: '12\r',
    });
    expect(config).toMatchObject({
      dbPoolSize: 12,
      logLevel: 'warn',
      port: 8080,
      metricsPort: 8080,
      // Without its trailing slash, so appended paths never double it.
      publicBaseUrl: 'https://api.example.com:8443',
      publicBaseUrlSet: true,
    });
    expect(loadConfig({})).toMatchObject({ logLevel: 'info', publicBaseUrlSet: false });
  });
});

describe('DATABASE_URL_FILE', () => {
  it('reads the database URL from a file, as compose secrets mount it, and refuses it beside DATABASE_URL', () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'secret-'));
    try {
      const file = path.join(folder, 'database_url');
      writeFileSync(file, 'postgres://voice:s3cret@db:5432/voice\n');
      expect(loadConfig({ DATABASE_URL_FILE: file }).databaseUrl).toBe('postgres://voice:s3cret@db:5432/voice');
      expect(() => loadConfig({ DATABASE_URL_FILE: file, DATABASE_URL: 'postgres://x@y/z' })).toThrow(
        'set DATABASE_URL or DATABASE_URL_FILE, not both',
      );
      expect(() => loadConfig({ DATABASE_URL_FILE: path.join(folder, 'missing') })).toThrow(
        /^DATABASE_URL_FILE names ".+missing", which cannot be read \(ENOENT\)$/,
      );
      // An empty secret is a mistake, never "no database" (which would start the embedded one).
      for (const blank of ['', '\n', '  \n']) {
        writeFileSync(file, blank);
        expect(() => loadConfig({ DATABASE_URL_FILE: file })).toThrow(/^DATABASE_URL_FILE names ".+", which is empty$/);
      }
      writeFileSync(file, 'mysql://x@y/z\n');
      expect(() => loadConfig({ DATABASE_URL_FILE: file })).toThrow('DATABASE_URL must be a postgres://');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('is what the operator CLI connects with when DATABASE_URL is unset', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase();
    const folder = mkdtempSync(path.join(tmpdir(), 'secret-'));
    try {
      const file = path.join(folder, 'database_url');
      writeFileSync(file, `${database.url}\n`);
      const created = await runAdmin('', ['org', 'create', '--name', 'From a file', '--json'], {
        DATABASE_URL: undefined,
        DATABASE_URL_FILE: file,
      });
      expect(created.code, created.stderr).toBe(0);
      const stored = await database.db.selectFrom('orgs').select('name').execute();
      expect(stored.map((org) => org.name)).toContain('From a file');

      const both = await runAdmin(database.url, ['org', 'list'], { DATABASE_URL_FILE: file });
      expect(both.code).toBe(2);
      expect(both.stderr).toContain('configuration error: set DATABASE_URL or DATABASE_URL_FILE, not both');
    } finally {
      rmSync(folder, { recursive: true, force: true });
      await database.drop();
    }
  });
});

/** Runs `dist/src/main.js serve ...args` (the build the test run made) with `env` added, to its end. */
function serve(args: string[], env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.resolve('dist/src/main.js'), 'serve', ...args],
      { env: { ...process.env, ...env }, timeout: 50_000 },
      (error, _stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stderr }),
    );
  });
}

describe('serve with an unusable setting', () => {
  it('exits 2 with a configuration error naming the variable', { timeout: 60_000 }, async () => {
    const result = await serve([], { LOG_LEVEL: 'verbose' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Configuration error: LOG_LEVEL must be one of');
  });

  it('exits 2 with a usage error on one line, then the usage', { timeout: 60_000 }, async () => {
    const result = await serve(['--processes', '-1'], {});
    expect(result.code).toBe(2);
    const [first, second] = result.stderr.split('\n');
    expect(first).toMatch(/^Error: Option '--processes' argument is ambiguous\. Did you forget .+--processes=-XYZ'\.$/);
    expect(second).toBe('');
    expect(result.stderr).toContain('Usage: voice-call-api serve');
  });
});
