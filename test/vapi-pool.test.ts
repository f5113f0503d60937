// The placement holds no pool connection while Vapi answers: with DB_POOL_SIZE=2 and a Vapi that takes
// 3 s to answer each POST /call, 20 concurrent placements all succeed, the pool's in-use gauge reads 0
// while they wait, and another org's GET /calls keeps being answered meanwhile.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connectDatabase } from '../src/database/connect.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { startVapiFake, type VapiFake } from './support/vapi-fake.js';

const PLACEMENTS = 20;
const PROVIDER_ANSWER_MS = 3_000;

let database: TestDatabase;
let fake: VapiFake;

beforeAll(async () => {
  database = await createTestDatabase();
  fake = await startVapiFake();
});

afterAll(async () => {
  await fake?.stop();
  await database?.drop();
});

it(`with DB_POOL_SIZE=2, ${PLACEMENTS} placements wait ${PROVIDER_ANSWER_MS} ms on Vapi without a pool connection`, async () => {
  // The wait for a pool connection is long here, so a busy machine slows the first steps without failing them.
  const small = connectDatabase(database.url, { poolSize: 2, namedStatements: true, connectTimeoutMs: 30_000 });
  const app = await startTestApp(
    { db: small.db, url: database.url },
    {
      workers: false,
      pool: small.pool,
      config: {
        dbPoolSize: 2,
        vapiApiKey: 'vapi-pool-key',
        vapiWebhookSecret: 'vapi-pool-secret',
        vapiBaseUrl: fake.url,
        providerTimeoutMs: 15_000,
      },
    },
  );
  try {
    const org = await createTestOrg(database.db, {
      planId: 'scale',
      agent: { provider: 'vapi', providerSettings: { assistantId: 'asst-pool', phoneNumberId: 'pn-pool' } },
    });
    const other = await createTestOrg(database.db);
    // Vapi answers each placement after 3 s, and not before the checks below are done, so no placement
    // can be in its second transaction while the gauge is read.
    let checked = () => {};
    const gate = new Promise<void>((resolve) => (checked = resolve));
    for (let i = 0; i < PLACEMENTS; i += 1)
      fake.script('POST /call', { act: true, delayMs: PROVIDER_ANSWER_MS, gate, status: 201 });
    const placements = Array.from({ length: PLACEMENTS }, () =>
      app.client(org.key).POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('4321') } }),
    );
    // Should a check below fail, closing the app ends these requests: the failed check is what to report,
    // not their rejections (Promise.all below still sees them).
    for (const placement of placements) void placement.catch(() => undefined);
    // Vapi has every call, and is holding every answer. The bound is generous: the placements' first
    // steps run one at a time under this pool, slowly on a busy machine.
    await waitFor(`${PLACEMENTS} placements waiting on Vapi`, () => fake.calls.size >= PLACEMENTS, 60_000);
    const gauge = app.deps.metrics.registry.getSingleMetric('voice_call_db_pool_connections_in_use')!;
    // Polled: a short write of the service's own (a key's last use, say) may hold a connection for a
    // moment. A connection held across the wait on Vapi would keep it above 0 until checked() below.
    await expect.poll(async () => (await gauge.get()).values[0]!.value, { timeout: 10_000 }).toBe(0);
    for (let read = 0; read < 5; read += 1) {
      const { response } = await app.client(other.key).GET('/calls');
      expect(response.status).toBe(200);
    }
    checked();
    const answers = await Promise.all(placements);
    expect(answers.map((answer) => answer.response.status)).toEqual(Array(PLACEMENTS).fill(201));
    expect(new Set(answers.map((answer) => answer.data!.data.provider_call_id)).size).toBe(PLACEMENTS);
  } finally {
    await app.close();
    await small.db.destroy();
  }
}, 150_000);
