// Races the feature tests do not already run. Covered elsewhere, not repeated here:
//   - concurrent placements against a small balance: test/calls-create.test.ts ("50 at once with credits for exactly 10")
//   - concurrent upserts of one new number: test/contacts.test.ts ("50 concurrent upserts of one new number")
//   - DELETE of a webhook during its delivery (and during a test send): test/webhooks-isolation.test.ts ("DELETE /webhooks/{id}")
//   - one Idempotency-Key sent concurrently: test/calls-idempotency.test.ts ("20 concurrent requests with one key")
// Here: placements racing the settlements of calls that end meanwhile, one key sent concurrently with
// two different bodies, cancels racing each other and the progress worker, upserts racing with
// different values, registrations racing the per-org maximum, and deletes racing changes.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';
import { createTestOrg, startTestApp, type TestApp } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';

const HOLD = 2000; // the test agent: 200 paise per minute, 600 s
const TERMINAL = ['completed', 'failed', 'no_answer', 'busy', 'canceled'];

let database: TestDatabase;
let app: TestApp;

beforeAll(async () => {
  database = await createTestDatabase();
  // Workers on and a fast simulator: calls end (and settle) while new ones are being placed.
  app = await startTestApp(database, { config: { simulatorStepMs: 2, webhookPrivateAllowlist: ['127.0.0.0/8'] } });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

/** Runs `work` while sampling the org's balance every few ms; returns the samples. */
async function sampleBalance(orgId: string, work: () => Promise<void>): Promise<number[]> {
  let sampling = true;
  const samples: number[] = [];
  const sampler = (async () => {
    while (sampling) {
      samples.push((await balanceAndLedgerSum(database.db, orgId)).balance);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  })();
  try {
    await work();
  } finally {
    sampling = false;
    await sampler;
  }
  return samples;
}

describe('placements racing settlements', () => {
  it(
    'never overdraw, and the ledger equals the balance, while earlier calls end and release their holds',
    { timeout: 60_000 },
    async () => {
      const credits = 3 * HOLD;
      const org = await createTestOrg(database.db, { planId: 'scale', credits });
      const client = app.client(org.key);
      const statuses: number[] = [];
      const samples = await sampleBalance(org.orgId, async () => {
        for (let wave = 0; wave < 6; wave += 1) {
          const answers = await Promise.all(
            Array.from({ length: 15 }, (_, i) =>
              client.POST('/calls', {
                body: { agent_id: org.agentId, to_e164: testNumber(['7777', '0001', '0004'][i % 3]!) },
              }),
            ),
          );
          statuses.push(...answers.map((answer) => answer.response.status));
          await new Promise((resolve) => setTimeout(resolve, 150));
        }
      });
      expect(statuses.every((status) => status === 201 || status === 402)).toBe(true);
      expect(statuses.filter((status) => status === 201).length).toBeGreaterThan(3);
      expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);

      await waitFor(
        'every call to end',
        async () => {
          const open = await database.db
            .selectFrom('calls')
            .select('id')
            .where('org_id', '=', org.orgId)
            .where('status', 'not in', TERMINAL as never)
            .execute();
          return open.length === 0;
        },
        30_000,
      );
      const charged = await database.db
        .selectFrom('calls')
        .select(sql<number>`coalesce(sum(credits_debited_paise), 0)`.as('sum'))
        .where('org_id', '=', org.orgId)
        .executeTakeFirstOrThrow();
      const money = await balanceAndLedgerSum(database.db, org.orgId);
      expect(money).toEqual({ balance: credits - Number(charged.sum), ledgerSum: credits - Number(charged.sum) });
      const { rows } = await sql<{ holds: number; releases: number }>`
      SELECT count(*) FILTER (WHERE kind = 'hold')::int AS holds, count(*) FILTER (WHERE kind = 'release')::int AS releases
      FROM credit_ledger WHERE org_id = ${org.orgId}::uuid`.execute(database.db);
      expect(rows[0]).toEqual({
        holds: statuses.filter((status) => status === 201).length,
        releases: statuses.filter((status) => status === 201).length,
      });
    },
  );
});

describe('one Idempotency-Key, two bodies, at once', () => {
  it('places one call; the same body replays it, the other gets idempotency_conflict', async () => {
    const org = await createTestOrg(database.db, { planId: 'scale' });
    const client = app.client(org.key);
    const bodies = [
      { agent_id: org.agentId, to_e164: testNumber('7777') },
      { agent_id: org.agentId, to_e164: testNumber('7777'), max_duration_sec: 60 },
    ];
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        client
          .POST('/calls', { body: bodies[i % 2]!, headers: { 'Idempotency-Key': 'two-bodies' } })
          .then((answer) => ({ i, answer })),
      ),
    );
    const created = answers.filter(({ answer }) => answer.response.status === 201);
    const conflicts = answers.filter(({ answer }) => answer.response.status === 409);
    expect(created.length + conflicts.length).toBe(30);
    expect(new Set(created.map(({ answer }) => answer.data!.data.id)).size).toBe(1);
    // Whichever body won, all of its requests got the call and all of the other body's a conflict.
    const winner = created[0]!.i % 2;
    expect(created.every(({ i }) => i % 2 === winner)).toBe(true);
    expect(
      conflicts.every(({ i, answer }) => i % 2 !== winner && answer.error!.error.code === 'idempotency_conflict'),
    ).toBe(true);
    const calls = await database.db.selectFrom('calls').select('id').where('org_id', '=', org.orgId).execute();
    expect(calls).toHaveLength(1);
  });
});

describe('cancels racing each other and the progress worker', () => {
  it('end the call once: one ending event, one hold and one release, never a 5xx', async () => {
    const org = await createTestOrg(database.db, { planId: 'scale' });
    const client = app.client(org.key);
    for (let round = 0; round < 5; round += 1) {
      const placed = await client.POST('/calls', { body: { agent_id: org.agentId, to_e164: testNumber('0002') } });
      const id = placed.data!.data.id;
      await new Promise((resolve) => setTimeout(resolve, round * 5));
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => client.POST('/calls/{id}/cancel', { params: { path: { id } } })),
      );
      const statuses = answers.map((answer) => answer.response.status);
      expect(statuses.every((status) => status === 200 || status === 409)).toBe(true);
      expect(statuses.filter((status) => status === 200).length).toBeLessThanOrEqual(1);
      await waitFor('the call to end', async () => {
        const row = await database.db
          .selectFrom('calls')
          .select('status')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        return TERMINAL.includes(row.status);
      });
      const events = await database.db
        .selectFrom('events')
        .select('kind')
        .where(sql<string>`data->>'call_id'`, '=', id)
        .execute();
      expect(events).toHaveLength(1);
      const ledger = await database.db
        .selectFrom('credit_ledger')
        .select('kind')
        .where('call_id', '=', id)
        .orderBy('id')
        .execute();
      expect(ledger.map((row) => row.kind)).toEqual(['hold', 'release']);
    }
    const money = await balanceAndLedgerSum(database.db, org.orgId);
    expect(money.balance).toBe(money.ledgerSum);
  });
});

describe('upserts of one number with different values, at once', () => {
  it("leave one contact holding one request's values, never a mix", async () => {
    const org = await createTestOrg(database.db, { planId: 'scale' });
    const client = app.client(org.key);
    const phone = testNumber('4242');
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        client.POST('/contacts', {
          body: {
            phone_e164: phone,
            name: `Writer ${i}`,
            email: `writer${i}@example.com`,
            metadata: { writer: i },
            consent_capture: 'manual',
          },
        }),
      ),
    );
    // One request created the contact (201); every other one updated it (200).
    const statuses = answers.map((answer) => answer.response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 200)).toHaveLength(29);
    const rows = await database.db
      .selectFrom('contacts')
      .select(['name', 'email', 'metadata'])
      .where('org_id', '=', org.orgId)
      .execute();
    expect(rows).toHaveLength(1);
    const writer = Number(rows[0]!.name!.replace('Writer ', ''));
    expect(rows[0]).toEqual({ name: `Writer ${writer}`, email: `writer${writer}@example.com`, metadata: { writer } });
  });
});

describe('webhook registrations and deletions, at once', () => {
  it('never exceed the per-org maximum of 20 endpoints', async () => {
    const org = await createTestOrg(database.db, { planId: 'scale' });
    const client = app.client(org.key);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        client.POST('/webhooks', { body: { url: `https://127.0.0.1:4/race-${i}`, events: ['call.completed'] } }),
      ),
    );
    const statuses = answers.map((answer) => answer.response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(20);
    expect(statuses.filter((status) => status === 403)).toHaveLength(10);
    const listed = await client.GET('/webhooks', { params: { query: { limit: 100 } } });
    expect(listed.data!.pagination.total).toBe(20);
  });

  it('one DELETE wins, the others and racing changes get not_found, never a 5xx', async () => {
    const org = await createTestOrg(database.db, { planId: 'scale' });
    const client = app.client(org.key);
    const created = await client.POST('/webhooks', {
      body: { url: 'https://127.0.0.1:4/doomed', events: ['call.completed'] },
    });
    const id = created.data!.data.id;
    const params = { params: { path: { id } } };
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, () => client.DELETE('/webhooks/{id}', params)),
      ...Array.from({ length: 5 }, () => client.PATCH('/webhooks/{id}', { ...params, body: { active: false } })),
      ...Array.from({ length: 5 }, () => client.POST('/webhooks/{id}/rotate-secret', params)),
    ]);
    const deletes = answers.slice(0, 5).map((answer) => answer.response.status);
    expect(deletes.filter((status) => status === 204)).toHaveLength(1);
    expect(deletes.filter((status) => status === 404)).toHaveLength(4);
    expect(answers.slice(5).every((answer) => answer.response.status === 200 || answer.response.status === 404)).toBe(
      true,
    );
    expect((await client.GET('/webhooks/{id}', params)).response.status).toBe(404);
  });
});
