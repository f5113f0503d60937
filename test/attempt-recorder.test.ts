// Attempts that finish together are written to the delivery log in one statement, and each still gets
// its own outcome: recorded, lease lost (another process took the delivery over) or gone (the endpoint
// was deleted). One bad record does not fail the others.
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../db/schema.js';
import { connectDatabase } from '../src/database/connect.js';
import type { AttemptRecord } from '../src/webhooks/attempt-queries.js';
import { AttemptRecorder } from '../src/webhooks/delivery/attempt-recorder.js';
import { claimDeliveries, type ClaimedDelivery } from '../src/webhooks/delivery-queries.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { endpointWithEvents } from './support/webhook-env.js';

let database: TestDatabase;
let counted: Kysely<Database>;
let writes = 0;

beforeAll(async () => {
  database = await createTestDatabase();
  const { pool } = connectDatabase(database.url, { poolSize: 5 });
  counted = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      if (event.level === 'query' && event.query.sql.includes('record_webhook_attempt')) writes += 1;
    },
  });
});

afterAll(async () => {
  await counted?.destroy();
  await database?.drop();
});

/** Registers an endpoint, emits `count` events to it and claims their deliveries as `owner`. */
async function claimed(count: number, owner: string): Promise<ClaimedDelivery[]> {
  const { webhookId } = await endpointWithEvents(database.db, count);
  const rows = await database.db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('webhook_id', '=', webhookId)
    .execute();
  const claimNow = new Date(Date.now() + 1_000);
  return claimDeliveries(
    database.db,
    rows.map((row) => row.id),
    { now: claimNow, owner, expiresAt: new Date(claimNow.getTime() + 60_000) },
  );
}

function recordOf(delivery: ClaimedDelivery, options: { owner?: string; statusCode: number }): AttemptRecord {
  const succeeded = options.statusCode < 300;
  const attemptedAt = new Date();
  return {
    lease: {
      deliveryId: delivery.id,
      owner: options.owner ?? delivery.lease.owner,
      expiresAt: delivery.lease.expiresAt,
    },
    state: succeeded
      ? { status: 'succeeded', attemptCount: 1, nextAttemptAt: null }
      : { status: 'pending', attemptCount: 1, nextAttemptAt: new Date(attemptedAt.getTime() + 60_000) },
    attempt: {
      id: randomUUID(),
      webhookId: delivery.webhookId,
      statusCode: options.statusCode,
      failureKind: succeeded ? null : 'http_status',
      excerpt: succeeded ? 'ok' : 'down, "quoted", {braced}',
      durationMs: 12,
      attemptedAt,
      affectsHealth: true,
      logSize: 100,
      disableAfterMs: 5 * 24 * 3_600_000,
    },
  };
}

describe('the attempt recorder', () => {
  it('writes attempts that finish together in one statement, each with its own outcome', async () => {
    const [ok, failed, stolen] = await claimed(3, 'worker-a');
    const orphan = recordOf(ok!, { statusCode: 200 });
    orphan.attempt = { ...orphan.attempt, id: randomUUID(), webhookId: randomUUID() };
    const recorder = new AttemptRecorder(counted);
    writes = 0;
    const outcomes = await Promise.all([
      recorder.record(recordOf(ok!, { statusCode: 200 })),
      recorder.record(recordOf(failed!, { statusCode: 503 })),
      recorder.record(recordOf(stolen!, { owner: 'worker-b', statusCode: 200 })),
      recorder.record(orphan),
    ]);
    expect(writes).toBe(1);
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['recorded', 'recorded', 'lease_lost', 'gone']);

    const rows = await database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'status', 'attempt_count', 'lease_owner'])
      .where('id', 'in', [ok!.id, failed!.id, stolen!.id])
      .execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(ok!.id)).toMatchObject({ status: 'succeeded', attempt_count: 1, lease_owner: null });
    expect(byId.get(failed!.id)).toMatchObject({ status: 'pending', attempt_count: 1, lease_owner: null });
    // The lease that was not ours is left as it was: its holder records its own attempt.
    expect(byId.get(stolen!.id)).toMatchObject({ status: 'pending', attempt_count: 0, lease_owner: 'worker-a' });

    const logged = await database.db
      .selectFrom('webhook_attempts')
      .select(['delivery_id', 'status_code', 'response_excerpt'])
      .where('webhook_id', '=', ok!.webhookId)
      .execute();
    expect(logged).toHaveLength(2);
    expect(logged.find((row) => row.delivery_id === failed!.id)).toMatchObject({
      status_code: 503,
      response_excerpt: 'down, "quoted", {braced}',
    });
  });

  it('writes the others when one record breaks the statement', async () => {
    const [first, second] = await claimed(2, 'worker-a');
    const recorder = new AttemptRecorder(counted);
    const broken = recordOf(second!, { statusCode: 200 });
    // An attempt id already in the log: its insert fails, and with it the batch it went in.
    const good = recordOf(first!, { statusCode: 200 });
    await recorder.record(good);
    broken.attempt.id = good.attempt.id;
    const [other] = await claimed(1, 'worker-a');
    const results = await Promise.allSettled([
      recorder.record(broken),
      recorder.record(recordOf(other!, { statusCode: 200 })),
    ]);
    expect(results[0].status).toBe('rejected');
    expect(results[1]).toMatchObject({ status: 'fulfilled', value: { outcome: 'recorded' } });
    const row = await database.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'lease_owner'])
      .where('id', '=', second!.id)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'pending', lease_owner: 'worker-a' });
  });
});
