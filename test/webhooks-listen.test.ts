// The integrators' receiver (npm run webhook:listen) as a real process, fed by the real sender:
// it accepts deliveries signed with its secret and rejects the rest.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';

const secret = 'c'.repeat(64);
let listener: ChildProcessWithoutNullStreams;
let output = '';
let dir: string;
let env: WebhookEnv;
let url: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'webhook-listen-'));
  const certFile = path.join(dir, 'cert.pem');
  listener = spawn(process.execPath, [
    '--import',
    'tsx',
    'src/main.ts',
    'webhook:listen',
    '--port',
    '0',
    '--secret',
    secret,
    '--cert-out',
    certFile,
  ]);
  listener.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const port = await new Promise<string>((resolve, reject) => {
    listener.stdout.on('data', () => {
      const match = /Listening on https:\/\/127\.0\.0\.1:(\d+)\//.exec(output);
      if (match) resolve(match[1]!);
    });
    listener.once('exit', (code) => reject(new Error(`listener exited with ${code}: ${output}`)));
  });
  url = `https://127.0.0.1:${port}/`;
  env = await webhookEnv({ config: { webhookCaCerts: [await readFile(certFile, 'utf8')] } });
}, 30_000);

afterAll(async () => {
  listener?.kill('SIGTERM');
  await env?.close();
  await rm(dir, { recursive: true, force: true });
});

it('verifies a delivery signed with its secret and prints the event', async () => {
  const { id } = await register(env, url);
  await env.database.db.updateTable('webhooks').set({ secret }).where('id', '=', id).execute();
  const { data } = await env.app.client(env.org.key).POST('/webhooks/{id}/test', { params: { path: { id } } });
  expect(data?.data.attempts[0]).toMatchObject({ status_code: 200, response_excerpt: '{"received":true}' });
  expect(output).toContain('verified webhook.test');
  expect(output).toContain(data!.data.event_id);
});

it('rejects a delivery signed with another secret', async () => {
  const { id } = await register(env, url);
  const { data } = await env.app.client(env.org.key).POST('/webhooks/{id}/test', { params: { path: { id } } });
  expect(data?.data).toMatchObject({ status: 'failed', attempts: [{ status_code: 400, failure_kind: 'http_status' }] });
  expect(data?.data.attempts[0]?.response_excerpt).toMatch(/no v1 signature matches/);
  expect(output).toMatch(/REJECTED webhook\.test/);
});
