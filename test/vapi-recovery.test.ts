// Recovering a Vapi placement whose outcome was unknown while the reconciliation job has more calls due
// than Vapi's lookup rate lets it look at: the placement (its hold reserved, its Idempotency-Key
// waiting) must still be settled, not wait behind calls that are looked up again and again. The job
// runs on the job engine, like the service's other periodic work.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { startVapiFake, type VapiFake } from './support/vapi-fake.js';

const SETTINGS = { assistantId: 'asst-recovery', phoneNumberId: 'pn-recovery' };

let database: TestDatabase;
let fake: VapiFake;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  fake = await startVapiFake();
  app = await startTestApp(database, {
    config: {
      vapiApiKey: 'vapi-recovery-key',
      vapiWebhookSecret: 'whsec-vapi-recovery',
      vapiBaseUrl: fake.url,
      providerTimeoutMs: 2_000,
      providerReconcileAfterS: 1,
    },
  });
});

afterAll(async () => {
  await app?.close();
  await fake?.stop();
  await database?.drop();
});

it('settles an unknown placement while more calls are due than Vapi may be asked about', async () => {
  const org = await createTestOrg(database.db, {
    credits: 10_000_000,
    agent: { provider: 'vapi', providerSettings: SETTINGS },
  });
  const client = app.client(org.key);
  // 40 calls Vapi holds queued, each looked up again a second after its last look: at 5 lookups a
  // second, some call is always due.
  for (let index = 0; index < 40; index += 1) {
    const { response } = await client.POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } });
    expect(response.status).toBe(201);
  }
  fake.script('POST /call', { status: 500, body: { message: 'Internal server error' }, act: true });
  const { response } = await client.POST('/calls', {
    body: { agent_id: org.agentId, to_e164: testNumber('4321') },
    headers: { 'Idempotency-Key': 'recover-under-load' },
  });
  expect(response.status).toBe(503);
  await waitFor(
    'the placement to be reconciled into a call',
    async () => (await database.db.selectFrom('call_placements').select('id').executeTakeFirst()) === undefined,
    20_000,
  );
  expect(fake.violations).toEqual([]);
  const { rows } = await sql<{ runs: number }>`
    SELECT count(*)::int AS runs FROM pgboss.job WHERE name = 'calls.reconcile' AND state IN ('active', 'completed')`.execute(
    database.db,
  );
  expect(rows[0]!.runs).toBeGreaterThan(0);
});
