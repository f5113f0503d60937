// Misbehaving receivers never hold up the others. test/webhooks-isolation.test.ts proves it for one
// endpoint that hangs, resets, redirects, fails or floods at a time; here: endpoints that answer
// slowly (late headers, a body dripped byte by byte, a TLS handshake never finished), and as many
// hanging endpoints as an org may register, which together want more attempts than one process runs.
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { emitEvents } from '../src/webhooks/outbox.js';
import { listDeliveryLog } from '../src/webhooks/service.js';
import { answer, hang, startReceiver, type Behaviour, type Receiver } from './support/webhook-receiver.js';
import { contactCreated, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';

const receivers: Receiver[] = [];
const envs: WebhookEnv[] = [];
const servers: net.Server[] = [];

afterEach(async () => {
  await Promise.all(envs.splice(0).map((env) => env.close()));
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  for (const server of servers.splice(0)) server.close();
});

async function receiver(behaviour: Behaviour): Promise<Receiver> {
  const started = await startReceiver(behaviour);
  receivers.push(started);
  return started;
}

/** Answers 200 only after `ms`. */
const late =
  (ms: number): Behaviour =>
  (_request, response) => {
    setTimeout(() => response.writeHead(200).end('late'), ms).unref();
  };

/** Sends headers at once, then one byte of body every 200 ms, for ever. */
const drip: Behaviour = (_request, response) => {
  response.writeHead(200, { 'content-type': 'text/plain' });
  const timer = setInterval(() => response.write('x'), 200);
  response.on('close', () => clearInterval(timer));
};

/** A TCP server that accepts connections and never says a word (no TLS handshake). */
async function silentServer(): Promise<string> {
  const server = net.createServer(() => undefined);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}

async function emitContacts(env: WebhookEnv, count: number): Promise<void> {
  await env.database.db.transaction().execute((trx) =>
    emitEvents(
      trx,
      env.org.orgId,
      'contact.created',
      Array.from({ length: count }, (_, i) => contactCreated(`N${i}`)),
      null,
    ),
  );
}

describe('slow receivers', () => {
  it(
    'late answers, dripped bodies and stalled TLS handshakes never delay a healthy endpoint',
    { timeout: 40_000 },
    async () => {
      const env = await webhookEnv();
      envs.push(env);
      env.worker({ start: true });
      const slow = await receiver(late(8_000));
      const dripping = await receiver(drip);
      const ids = {
        slow: (await register(env, slow.url)).id,
        dripping: (await register(env, dripping.url)).id,
        stalled: (await register(env, await silentServer())).id,
      };
      const healthy = await receiver(answer(200));
      await register(env, healthy.url);

      const emittedAt = Date.now();
      await emitContacts(env, 6);
      await healthy.waitFor(6, 5_000);
      expect(Date.now() - emittedAt).toBeLessThan(5_000);

      // Each slow kind ends as the spec says, within the 10-second bound: a late 2xx succeeds, a 2xx whose
      // body is still dripping succeeds with what arrived, a handshake never finished times out.
      // Four attempts to each run at once (the per-endpoint cap); the other two events' attempts follow
      // them, so a slow machine may already show six when it looks: every one must have ended the same way.
      const log = (id: string) => listDeliveryLog(env.database.db, id, { limit: 10 });
      const kinds = async (id: string) => (await log(id)).map((entry) => entry.failure_kind ?? entry.status_code);
      const endsAs = async (id: string, outcome: string | number) => {
        await expect
          .poll(async () => (await kinds(id)).length, { timeout: 15_000, interval: 250 })
          .toBeGreaterThanOrEqual(4);
        expect(new Set(await kinds(id))).toEqual(new Set([outcome]));
      };
      await endsAs(ids.slow, 200);
      await endsAs(ids.stalled, 'timeout');
      await endsAs(ids.dripping, 200);
      for (const id of Object.values(ids))
        for (const entry of await log(id)) expect(entry.duration_ms).toBeLessThan(11_000);
    },
  );
});

describe('as many hanging endpoints as an org may have', () => {
  it(
    'never delay a healthy endpoint, though together they want more attempts than a process runs at once',
    { timeout: 40_000 },
    async () => {
      const env = await webhookEnv();
      envs.push(env);
      env.worker({ start: true });
      // 19 endpoints that never answer (the per-org maximum is 20): 19 x 4 attempts in flight.
      for (let i = 0; i < 19; i += 1) await register(env, (await receiver(hang)).url);
      const healthy = await receiver(answer(200));
      await register(env, healthy.url);

      const emittedAt = Date.now();
      await emitContacts(env, 6);
      // Well before the hanging attempts' 10-second timeout frees anything.
      await healthy.waitFor(6, 8_000);
      expect(Date.now() - emittedAt).toBeLessThan(5_000);
    },
  );
});
