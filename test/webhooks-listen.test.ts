// The integrators' receiver (npm run webhook:listen) as a real process, fed by the real sender over
// HTTPS: it registers its own endpoint, verifies and forwards deliveries, survives a restart with the
// same certificate, endpoint and secret, keeps its state private and never takes a secret in argv.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { chmod, mkdir, readFile, stat, mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { verifySignature } from '../src/webhooks/delivery/verify.js';
import { startTestApp } from './support/app.js';
import { register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';

type Line = Record<string, unknown> & { type: string };

/** A running listener: its process and the JSON lines it printed so far. */
interface Listener {
  child: ChildProcessWithoutNullStreams;
  lines: Line[];
  stderr: () => string;
  /** The first line of `type`, waiting for it (rejects when the listener exits first). */
  next(type: string): Promise<Line>;
}

const KEY_VARIABLE = 'VOICE_CALL_API_KEY';
let dir: string;
let stateDir: string;
let env: WebhookEnv;
let listener: Listener;
let endpoint: { id: string; url: string };
const forwarded: Array<{ headers: http.IncomingHttpHeaders; body: Buffer }> = [];
let forwardServer: http.Server;
let forwardUrl: string;

function startListener(args: string[], extraEnv: Record<string, string> = {}, stdin?: string): Listener {
  const child = spawn(process.execPath, ['dist/src/main.js', 'webhook:listen', '--json', ...args], {
    env: { ...process.env, ...extraEnv },
  });
  if (stdin !== undefined) child.stdin.end(stdin);
  const lines: Line[] = [];
  let pending = '';
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const complete = pending.split('\n');
    pending = complete.pop()!;
    for (const text of complete) if (text) lines.push(JSON.parse(text) as Line);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const next = (type: string) =>
    new Promise<Line>((resolve, reject) => {
      const check = () => {
        const found = lines.find((line) => line.type === type);
        if (found) return resolve(found);
        if (child.exitCode !== null) return reject(new Error(`listener exited ${child.exitCode}: ${stderr}`));
        waiters.push(check);
      };
      child.once('exit', check);
      check();
    });
  return { child, lines, stderr: () => stderr, next };
}

function stop(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** Runs the listener to its end. */
async function runListener(args: string[], extraEnv: Record<string, string> = {}) {
  const run = startListener(args, extraEnv);
  const code = await new Promise<number | null>((resolve) => run.child.once('exit', resolve));
  return { code, lines: run.lines, stderr: run.stderr() };
}

const selfRegistering = () => ['--config-dir', stateDir, '--api-url', env.app.baseUrl, '--forward-to', forwardUrl];

async function sendTest(id: string) {
  const { data } = await env.app.client(env.org.key).POST('/webhooks/{id}/test', { params: { path: { id } } });
  return data!.data;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'webhook-listen-'));
  stateDir = path.join(dir, 'state');
  // The CA is made once, before the API starts, so the API can trust it from the start.
  const setup = await runListener(['--setup', '--config-dir', stateDir]);
  expect(setup.code, setup.stderr).toBe(0);
  const caFile = setup.lines.find((line) => line.type === 'trust')!.ca_file as string;
  env = await webhookEnv({ config: { webhookCaCerts: [await readFile(caFile, 'utf8')] } });

  forwardServer = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      forwarded.push({ headers: request.headers, body: Buffer.concat(chunks) });
      response.writeHead(202, { 'content-type': 'application/json' }).end('{"local":"ok"}');
    });
  });
  await new Promise<void>((resolve) => forwardServer.listen(0, '127.0.0.1', resolve));
  forwardUrl = `http://127.0.0.1:${(forwardServer.address() as AddressInfo).port}/hook`;

  listener = startListener(['--port', '0', ...selfRegistering()], { [KEY_VARIABLE]: env.org.key });
  const line = await listener.next('endpoint');
  endpoint = { id: line.id as string, url: line.url as string };
}, 60_000);

afterAll(async () => {
  if (listener) await stop(listener.child);
  await new Promise((resolve) => forwardServer?.close(resolve));
  await env?.close();
  await rm(dir, { recursive: true, force: true });
});

it('registers its own endpoint and keeps its state private', async () => {
  expect(listener.lines.find((line) => line.type === 'endpoint')).toMatchObject({ registered: true });
  const { data } = await env.app.client(env.org.key).GET('/webhooks/{id}', { params: { path: { id: endpoint.id } } });
  expect(data?.data.url).toBe(endpoint.url);

  expect((await stat(stateDir)).mode & 0o777).toBe(0o700);
  for (const file of ['endpoint.json', 'key.pem', 'ca-key.pem']) {
    expect((await stat(path.join(stateDir, file))).mode & 0o777, file).toBe(0o600);
  }
  const stored = JSON.parse(await readFile(path.join(stateDir, 'endpoint.json'), 'utf8')) as { secret: string };
  expect(stored.secret).toMatch(/^[0-9a-f]{64}$/);
  // Neither the secret nor the API key is on the process's command line.
  const argv = await readFile(`/proc/${listener.child.pid}/cmdline`, 'utf8');
  expect(argv).toContain('webhook:listen');
  expect(argv).not.toContain(stored.secret);
  expect(argv).not.toContain(env.org.key);
});

it('verifies a delivery and forwards it, answering with the local app’s status', async () => {
  const delivery = await sendTest(endpoint.id);
  expect(delivery.attempts[0]).toMatchObject({ status_code: 202, response_excerpt: '{"local":"ok"}' });
  const { secret } = JSON.parse(await readFile(path.join(stateDir, 'endpoint.json'), 'utf8')) as { secret: string };
  const received = forwarded.at(-1)!;
  expect(received.headers['x-svc-event']).toBe('webhook.test');
  expect(verifySignature(received.body, received.headers['x-svc-signature'] as string, [secret]).ok).toBe(true);
  const printed = await listener.next('delivery');
  expect(printed).toMatchObject({ verified: true, event: 'webhook.test', forward: { ok: true, status: 202 } });
  expect(JSON.stringify(printed.body)).toContain(delivery.event_id);
});

it('rejects a delivery signed with another secret', async () => {
  const other = await register(env, endpoint.url);
  const delivery = await sendTest(other.id);
  expect(delivery.attempts[0]).toMatchObject({ status_code: 400 });
  expect(delivery.attempts[0]?.response_excerpt).toMatch(/no v1 signature matches/);
  const count = forwarded.length;
  await expect
    .poll(() => listener.lines.some((line) => line.type === 'delivery' && line.verified === false))
    .toBe(true);
  expect(forwarded.length).toBe(count);
  await env.app.client(env.org.key).DELETE('/webhooks/{id}', { params: { path: { id: other.id } } });
});

it('after a restart serves the same certificate, endpoint and secret', async () => {
  expect(await stop(listener.child)).toBe(0);
  listener = startListener(selfRegistering(), { [KEY_VARIABLE]: env.org.key });
  expect(await listener.next('endpoint')).toMatchObject({ id: endpoint.id, url: endpoint.url, registered: false });
  const delivery = await sendTest(endpoint.id);
  // A TLS failure would be an attempt without a status.
  expect(delivery.attempts[0]).toMatchObject({ status_code: 202 });
  expect(await listener.next('delivery')).toMatchObject({ verified: true });
}, 30_000);

it('takes a secret from standard input and refuses one on the command line', async () => {
  const refused = await runListener(['--config-dir', stateDir, '--secret', 'not-on-argv-1234']);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toMatch(/--secret-file/);
  expect(refused.stderr).not.toContain('not-on-argv-1234');

  const secret = 'd'.repeat(64);
  const piped = startListener(['--port', '0', '--config-dir', stateDir, '--secret-file', '-'], {}, `${secret}\n`);
  try {
    const url = (await piped.next('listening')).url as string;
    expect(await piped.next('secrets')).toMatchObject({ count: 1 });
    const { id } = await register(env, url);
    await env.database.db.updateTable('webhooks').set({ secret }).where('id', '=', id).execute();
    expect((await sendTest(id)).attempts[0]).toMatchObject({ status_code: 200 });
    await env.app.client(env.org.key).DELETE('/webhooks/{id}', { params: { path: { id } } });
  } finally {
    await stop(piped.child);
  }
}, 30_000);

it('says which setting the API needs when it refuses the listener’s URL, and stores nothing', async () => {
  // The same database behind an API with the production address policy.
  const strict = await startTestApp(env.database, { workers: false, config: { webhookPrivateAllowlist: [] } });
  try {
    const refusedDir = path.join(dir, 'refused');
    const run = await runListener(['--port', '0', '--config-dir', refusedDir, '--api-url', strict.baseUrl], {
      [KEY_VARIABLE]: env.org.key,
    });
    expect(run.code).toBe(1);
    expect((JSON.parse(run.stderr) as { error: string }).error).toMatch(
      /^POST \/webhooks answered 400 invalid_request: .*loopback address.*WEBHOOK_PRIVATE_ALLOWLIST=127\.0\.0\.0\/8\)$/,
    );
    await expect(stat(path.join(refusedDir, 'endpoint.json'))).rejects.toThrow(/ENOENT/);
  } finally {
    await strict.close();
  }
}, 30_000);

it('--forget deletes the endpoint through the API given on the command line and removes the stored state', async () => {
  await stop(listener.child);
  const apiUrl = ['--api-url', env.app.baseUrl];
  const noUrl = await runListener(['--forget', '--config-dir', stateDir], { [KEY_VARIABLE]: env.org.key });
  expect(noUrl.code).toBe(2);
  expect(noUrl.stderr).toContain('--forget needs --api-url');
  const without = await runListener(['--forget', '--config-dir', stateDir, ...apiUrl]);
  expect(without.code).toBe(2);
  expect(without.stderr).toContain(KEY_VARIABLE);
  // The key goes only where the user says, and never to an API the endpoint was not registered with.
  const elsewhere = await runListener(['--forget', '--config-dir', stateDir, '--api-url', 'http://127.0.0.1:9'], {
    [KEY_VARIABLE]: env.org.key,
  });
  expect(elsewhere.code).toBe(1);
  expect(elsewhere.stderr).toContain(`pass --api-url ${env.app.baseUrl}/api/v1`);
  const plain = await runListener(['--forget', '--config-dir', stateDir, '--api-url', 'http://api.example.com'], {
    [KEY_VARIABLE]: env.org.key,
  });
  expect(plain.code).toBe(2);
  expect(plain.stderr).toContain('must be https://');

  const forgot = await runListener(['--forget', '--config-dir', stateDir, ...apiUrl], { [KEY_VARIABLE]: env.org.key });
  expect(forgot.code, forgot.stderr).toBe(0);
  expect(forgot.lines[0]).toMatchObject({ type: 'forgotten', id: endpoint.id });
  const { response } = await env.app
    .client(env.org.key)
    .GET('/webhooks/{id}', { params: { path: { id: endpoint.id } } });
  expect(response.status).toBe(404);
  await expect(stat(path.join(stateDir, 'endpoint.json'))).rejects.toThrow(/ENOENT/);
});

it('leaves the mode of a folder it did not create alone, and refuses one others can write to', async () => {
  const shared = path.join(dir, 'shared');
  await mkdir(shared);
  await chmod(shared, 0o1777);
  const refused = await runListener(['--setup', '--config-dir', shared]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain('can be written by other users');
  expect((await stat(shared)).mode & 0o7777).toBe(0o1777);

  const own = path.join(dir, 'own');
  await mkdir(own);
  await chmod(own, 0o750);
  const accepted = await runListener(['--setup', '--config-dir', own]);
  expect(accepted.code, accepted.stderr).toBe(0);
  expect((await stat(own)).mode & 0o7777).toBe(0o750);
});

/** The listener process's resident memory, in bytes (from /proc). */
async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)![1]) * 1024;
}

/** POSTs `size` bytes (streamed, never held whole) with `headers`; resolves with the status, or the error code. */
function postLarge(url: string, size: number, headers: Record<string, string>): Promise<number | string> {
  return new Promise((resolve) => {
    const request = https.request(url, { method: 'POST', headers, rejectUnauthorized: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    const chunk = Buffer.alloc(1024 * 1024, 'x');
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!request.write(chunk)) return void request.once('drain', pump);
      }
      request.end();
    };
    pump();
  });
}

it('refuses unsigned requests and bodies over 1 MiB before reading them, keeping its memory small', async () => {
  const small = startListener(['--port', '0', '--config-dir', path.join(dir, 'memory')], {
    WEBHOOK_SECRETS: 'a'.repeat(64),
  });
  try {
    const url = (await small.next('listening')).url as string;
    const before = await residentBytes(small.child.pid!);
    const unsigned = await postLarge(url, 400 * 1024 * 1024, { 'content-type': 'application/json' });
    const signed = await postLarge(url, 400 * 1024 * 1024, {
      'content-type': 'application/json',
      'x-svc-signature': `t=${Date.now()},v1=${'0'.repeat(64)}`,
    });
    // Refused with 400 and 413, or cut off while the client was still sending: never read in full.
    expect([400, 'ECONNRESET', 'EPIPE']).toContain(unsigned);
    expect([413, 'ECONNRESET', 'EPIPE']).toContain(signed);
    const growth = (await residentBytes(small.child.pid!)) - before;
    expect(growth).toBeLessThan(64 * 1024 * 1024);
    expect(small.child.exitCode).toBeNull();
  } finally {
    await stop(small.child);
  }
}, 120_000);
