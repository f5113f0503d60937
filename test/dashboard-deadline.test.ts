// A dashboard form that waits on a webhook receiver (a test send) gets the same extra time as its API
// operation, so a receiver slower than the request deadline still ends in the dashboard's own answer,
// not the API's 503.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptLink, inviteMember } from '../src/members/service.js';
import { startSession } from '../src/members/sessions.js';
import { SESSION_COOKIE } from '../src/dashboard/cookies.js';
import { register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { slowly, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { csrfTokenOf, PASSWORD } from './support/dashboard.js';

const DEADLINE_MS = 1_000;

let env: WebhookEnv;
let slow: Receiver;
let cookie: string;

beforeAll(async () => {
  env = await webhookEnv({ config: { requestTimeoutMs: DEADLINE_MS } });
  slow = await startReceiver(slowly(2 * DEADLINE_MS));
  const by = { actor: 'cli', address: null };
  const { token } = await inviteMember(
    env.database.db,
    { orgId: env.org.orgId, email: 'slow@example.com', role: 'admin' },
    by,
  );
  const user = await acceptLink(env.database.db, token, PASSWORD);
  // Signed in without the form: its password check on a busy machine could outlast the short deadline,
  // which is for the test send alone.
  const lifetimes = {
    idleMs: env.app.deps.config.dashboardSessionIdleMs,
    absoluteMs: env.app.deps.config.dashboardSessionAbsoluteMs,
  };
  const { token: session } = await startSession(env.database.db, user, lifetimes, new Date(), null);
  cookie = `${SESSION_COOKIE}=${session}`;
}, 60_000);

afterAll(async () => {
  await slow?.close();
  await env?.close();
});

describe('a dashboard test send to a receiver slower than the request deadline', () => {
  it('answers with the dashboard redirect once the attempt is logged', { timeout: 60_000 }, async () => {
    const base = env.app.baseUrl;
    const { id } = await register(env, slow.url);
    const page = await (await fetch(`${base}/dashboard/webhooks/${id}`, { headers: { Cookie: cookie } })).text();
    const csrf = csrfTokenOf(page);

    const started = Date.now();
    const sent = await fetch(`${base}/dashboard/webhooks/${id}/test`, {
      method: 'POST',
      headers: { Origin: base, Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf }).toString(),
      redirect: 'manual',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2 * DEADLINE_MS - 100);
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toMatch(new RegExp(`^/dashboard/webhooks/${id}\\?done=test\\.[\\w-]{22}$`));
  });
});
