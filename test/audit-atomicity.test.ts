// A change made from the dashboard or the CLI and its audit entry commit together: when the entry
// cannot be written, the change is not made either (nor a dashboard session started). A trigger refuses every audit insert here.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as webhooks from '../src/webhooks/service.js';
import { setWebhookActive } from '../src/webhooks/operator.js';
import { importContacts } from '../src/contacts/csv-import.js';
import { contactCreated, emit, register, webhookEnv, type WebhookEnv } from './support/webhook-env.js';
import { startReceiver, type Receiver } from './support/webhook-receiver.js';
import { runAdmin } from './support/cli.js';
import { acceptLink, inviteMember } from '../src/members/service.js';
import { signIn } from '../src/members/sign-in.js';
import { HashPool } from '../src/members/hash-pool.js';
import { PASSWORD } from './support/dashboard.js';

let env: WebhookEnv;
let target: Receiver;

beforeAll(async () => {
  env = await webhookEnv();
  target = await startReceiver();
}, 60_000);

afterAll(async () => {
  await target?.close();
  await env?.close();
});

beforeEach(async () => {
  await sql`CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'audit refused by the test'; END $$`.execute(env.database.db);
  await sql`CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW
    EXECUTE FUNCTION refuse_audit()`.execute(env.database.db);
});

afterEach(async () => {
  await sql`DROP TRIGGER refuse_audit ON audit_log`.execute(env.database.db);
  await sql`DROP FUNCTION refuse_audit()`.execute(env.database.db);
});

const REFUSED = /audit refused by the test/;

/** An audit entry as the dashboard writes one for the test org. */
function auditOf(action: string, target: string) {
  return { orgId: env.org.orgId, actor: 'admin@example.com', address: '127.0.0.1', action, target };
}

/** The endpoint's row as stored, deleted or not. */
async function endpointRow(id: string) {
  return env.database.db
    .selectFrom('webhooks')
    .select(['active', 'secret', 'deleted_at'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
}

describe('webhook endpoint changes whose audit entry cannot be written', () => {
  it('registers no endpoint', async () => {
    const url = `${target.url}/never`;
    const input = { url, events: ['contact.created' as const] };
    await expect(
      webhooks.createWebhook(env.app.deps, env.org.orgId, input, auditOf('webhook.created', url)),
    ).rejects.toThrow(REFUSED);
    const rows = await env.database.db.selectFrom('webhooks').select('id').where('url', '=', url).execute();
    expect(rows).toEqual([]);
  });

  it('leaves the endpoint on, its secret and the endpoint itself as they were', async () => {
    const { id } = await register(env, target.url);
    const before = await endpointRow(id);
    const { deps } = env.app;
    const orgId = env.org.orgId;

    await expect(
      webhooks.updateWebhook(deps, orgId, id, { active: false }, auditOf('webhook.disabled', id)),
    ).rejects.toThrow(REFUSED);
    await expect(
      webhooks.rotateWebhookSecret(deps, orgId, id, {
        expirePrevious: false,
        audit: auditOf('webhook.secret_rotated', id),
      }),
    ).rejects.toThrow(REFUSED);
    await expect(webhooks.deleteWebhook(deps, orgId, id, auditOf('webhook.deleted', id))).rejects.toThrow(REFUSED);
    await expect(
      setWebhookActive(env.database.db, id, { active: false, now: new Date(), actor: 'cli', leaseMs: 15_000 }),
    ).rejects.toThrow(REFUSED);

    expect(await endpointRow(id)).toEqual(before);
    expect(before).toMatchObject({ active: true, deleted_at: null });
  });

  it('sends no test event and records no test delivery', async () => {
    const tested = await startReceiver();
    try {
      const { id } = await register(env, tested.url);
      await expect(
        webhooks.sendTestEvent(env.app.deps, env.org.orgId, id, null, auditOf('webhook.test_sent', id)),
      ).rejects.toThrow(REFUSED);
      const deliveries = await env.database.db
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('webhook_id', '=', id)
        .execute();
      expect(deliveries).toEqual([]);
      expect(tested.requests).toEqual([]);
    } finally {
      await tested.close();
    }
  });

  it('queues no redelivery', async () => {
    const { id } = await register(env, target.url);
    await emit(env, 'contact.created', contactCreated());
    const deliveries = () =>
      env.database.db.selectFrom('webhook_deliveries').select(['id', 'status']).where('webhook_id', '=', id).execute();
    // No worker runs here: mark the first delivery done, so a redelivery would be a new row.
    const [first] = await deliveries();
    await env.database.db
      .updateTable('webhook_deliveries')
      .set({ status: 'failed' })
      .where('id', '=', first!.id)
      .execute();

    await expect(
      webhooks.redeliver(env.app.deps, env.org.orgId, id, first!.id, auditOf('webhook.redelivered', first!.id)),
    ).rejects.toThrow(REFUSED);
    expect(await deliveries()).toEqual([{ id: first!.id, status: 'failed' }]);
  });
});

describe('a contact import whose audit entry cannot be written', () => {
  it('imports no row', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'audit-import-'));
    try {
      const file = path.join(dir, 'contacts.csv');
      await writeFile(file, 'phone_e164,name,consent_capture\n+919876500001,Unaudited,manual\n');
      const audit = () => auditOf('contacts.imported', '1 created');
      await expect(importContacts(env.app.deps, env.org.orgId, file, { source: 'dashboard', audit })).rejects.toThrow(
        REFUSED,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const rows = await env.database.db
      .selectFrom('contacts')
      .select('id')
      .where('phone_e164', '=', '+919876500001')
      .execute();
    expect(rows).toEqual([]);
  });
});

describe("the operator's plan commands whose audit entry cannot be written", () => {
  it('create, change and assign no plan, and say why', async () => {
    const cli = (...args: string[]) => runAdmin(env.database.url, args);
    const created = await cli('plan', 'create', '--id', 'unaudited', '--name', 'Unaudited', '--rate-limit', '60');
    expect(created.code).toBe(1);
    expect(created.stderr).toMatch(REFUSED);
    const updated = await cli('plan', 'update', '--id', 'scale', '--rate-limit', '7');
    expect(updated.code).toBe(1);
    const assigned = await cli('plan', 'set', '--org', env.org.orgId, '--plan', 'none');
    expect(assigned.code).toBe(1);

    const plans = await env.database.db.selectFrom('plans').select(['id', 'rate_limit_per_minute']).execute();
    expect(plans.map((plan) => plan.id)).not.toContain('unaudited');
    expect(plans.find((plan) => plan.id === 'scale')!.rate_limit_per_minute).not.toBe(7);
    const org = await env.database.db
      .selectFrom('orgs')
      .select('plan_id')
      .where('id', '=', env.org.orgId)
      .executeTakeFirstOrThrow();
    expect(org.plan_id).toBe('scale');
  }, 120_000);
});

describe('a dashboard sign-in whose audit entry cannot be written', () => {
  it('starts no session', async () => {
    await sql`ALTER TABLE audit_log DISABLE TRIGGER refuse_audit`.execute(env.database.db);
    const by = { actor: 'cli', address: null };
    const invited = { orgId: env.org.orgId, email: 'unaudited@example.com', role: 'admin' as const };
    const { token } = await inviteMember(env.database.db, invited, by);
    const user = await acceptLink(env.database.db, token, PASSWORD);
    await sql`ALTER TABLE audit_log ENABLE TRIGGER refuse_audit`.execute(env.database.db);

    const lifetimes = { idleMs: 60_000, absoluteMs: 120_000 };
    const credentials = { email: invited.email, password: PASSWORD, address: '127.0.0.1' };
    const hashes = new HashPool({ atOnce: 1, waiting: 0, perAddress: 1, maxWaitMs: 1000 });
    await expect(signIn(env.database.db, hashes, credentials, lifetimes)).rejects.toThrow(REFUSED);
    const sessions = await env.database.db
      .selectFrom('dashboard_sessions')
      .select('user_id')
      .where('user_id', '=', user.id)
      .execute();
    expect(sessions).toEqual([]);
  });
});
