// The signature verification examples in examples/verify-signature/ (Node, Python, Go, shell with
// openssl), each run as its own process on a delivery the service really sent: they accept it, and
// reject a tampered body, a wrong secret, a stale timestamp and a timestamp header that disagrees.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type ReceivedRequest, type Receiver } from './support/webhook-receiver.js';
import { register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { commandOf, skipWithout, type Toolchain } from './support/toolchains.js';

const EXAMPLES = fileURLToPath(new URL('../examples/verify-signature/', import.meta.url));
// Go keeps its build cache here, so HOME does not matter and later runs reuse the compiled example.
const GO_DIR = path.join(tmpdir(), 'voice-call-api-go');

const EXAMPLE_COMMANDS: Record<string, string[]> = {
  node: [process.execPath, 'verify.mjs'],
  python: [commandOf('python3'), 'verify.py'],
  go: [commandOf('go'), 'run', 'verify.go'],
  shell: ['bash', 'verify.sh'],
};

/** The program each example needs besides its interpreter being Node or bash. */
const EXAMPLE_TOOLCHAINS: Record<string, Toolchain | undefined> = { python: 'python3', go: 'go', shell: 'openssl' };

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs one example in its folder with `body` on stdin, the headers as arguments and `secret` in WEBHOOK_SECRET. */
function runExample(name: string, body: Buffer, headers: string[], secret: string): Promise<Outcome> {
  const [command, ...args] = EXAMPLE_COMMANDS[name]!;
  const child = spawn(command!, [...args, ...headers], {
    cwd: EXAMPLES,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME ?? GO_DIR,
      GOCACHE: path.join(GO_DIR, 'cache'),
      GOPATH: path.join(GO_DIR, 'path'),
      WEBHOOK_SECRET: secret,
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // An example that rejects a stale timestamp from its arguments may exit before reading the body:
  // the write then fails with EPIPE, which is not the example's answer (its exit code is).
  child.stdin.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') child.emit('error', error);
  });
  child.stdin.end(body);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let env: WebhookEnv;
let receiver: Receiver;
let delivery: ReceivedRequest;
let secret: string;

beforeAll(async () => {
  env = await webhookEnv();
  env.worker({ start: true });
  receiver = await startReceiver();
  ({ secret } = await register(env, receiver.url, ['contact.created']));
  // A new contact through the API: the service emits contact.created and delivers it, signed.
  const created = await env.app.client(env.org.key).POST('/contacts', {
    body: { phone_e164: '+919812300001', name: 'Asha Verma', consent_capture: 'manual' },
  });
  expect(created.response.status).toBe(201);
  delivery = (await receiver.waitFor(1, 10_000))[0]!;
}, 60_000);

afterAll(async () => {
  await receiver?.close();
  await env?.close();
});

/** Whether each example's tests are skipped on this machine (its toolchain is missing, outside CI). */
const skipped = Object.fromEntries(
  Object.keys(EXAMPLE_COMMANDS).map((name) => {
    const toolchain = EXAMPLE_TOOLCHAINS[name];
    return [name, toolchain !== undefined && skipWithout(toolchain)];
  }),
);

describe.each(Object.keys(EXAMPLE_COMMANDS))('the %s example', (name) => {
  const headers = () => [String(delivery.headers['x-svc-signature']), String(delivery.headers['x-svc-timestamp'])];

  it.skipIf(skipped[name])(
    'accepts the delivery as the service sent it, with or without x-svc-timestamp',
    async () => {
      const accepted = await runExample(name, delivery.bytes, headers(), secret);
      expect(accepted, accepted.stderr).toMatchObject({ code: 0, stdout: 'ok\n' });
      const signatureOnly = await runExample(name, delivery.bytes, headers().slice(0, 1), secret);
      expect(signatureOnly.code, signatureOnly.stderr).toBe(0);
      // While a secret is rotated, the receiver may hold the old and the new one.
      const twoSecrets = await runExample(name, delivery.bytes, headers(), `${'0'.repeat(64)},${secret}`);
      expect(twoSecrets.code, twoSecrets.stderr).toBe(0);
    },
    120_000,
  );

  it.skipIf(skipped[name])(
    'rejects a tampered body, a wrong secret, a stale timestamp and a disagreeing x-svc-timestamp',
    async () => {
      const tampered = Buffer.from(delivery.bytes.toString('utf8').replace('Asha', 'Usha'));
      expect(tampered.equals(delivery.bytes)).toBe(false);
      const stale = Date.now() - 6 * 60 * 1000;
      const staleSignature = createHmac('sha256', secret).update(`${stale}.`).update(delivery.bytes).digest('hex');
      const staleHeader = `t=${stale},v1=${staleSignature}`;
      // A timestamp with a leading zero is a number like any other (bash would read it as octal).
      const leadingZero = `t=09,v1=${staleSignature}`;
      const cases: Array<[string, Buffer, string[], string, RegExp]> = [
        ['tampered body', tampered, headers(), secret, /no v1 signature matches/],
        ['wrong secret', delivery.bytes, headers(), 'f'.repeat(64), /no v1 signature matches/],
        ['stale timestamp', delivery.bytes, [staleHeader], secret, /5 minutes/],
        ['timestamp with a leading zero', delivery.bytes, [leadingZero], secret, /5 minutes/],
        ['x-svc-timestamp not t', delivery.bytes, [headers()[0]!, String(stale)], secret, /differs/],
      ];
      for (const [label, body, given, key, reason] of cases) {
        const outcome = await runExample(name, body, given, key);
        expect(outcome.code, `${label}: ${outcome.stdout}${outcome.stderr}`).toBe(1);
        expect(outcome.stdout, label).toBe('');
        expect(outcome.stderr, label).toMatch(reason);
      }
    },
    120_000,
  );
});
