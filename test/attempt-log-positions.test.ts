// Each endpoint numbers the attempts it logs, and the log keeps its newest ones by that number. A
// database that already holds logs is numbered by migration 022 in the order the attempts were written,
// and keeps pruning the right line afterwards.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../db/migrations/index.js';
import { connectDatabase, type Db } from '../src/database/connect.js';
import { migrateToLatest } from '../src/database/migrate.js';
import { recordAttempts } from '../src/webhooks/attempt-queries.js';
import { claimDeliveries } from '../src/webhooks/delivery-queries.js';
import { createEmptyDatabase } from './support/database.js';
import { endpointWithEvents } from './support/webhook-env.js';

const BEFORE_POSITIONS = '2026-11-26-021-redeliveries';

let empty: Awaited<ReturnType<typeof createEmptyDatabase>>;
let db: Db;

beforeAll(async () => {
  empty = await createEmptyDatabase();
  db = connectDatabase(empty.url, { poolSize: 4 }).db;
});

afterAll(async () => {
  await db?.destroy();
  await empty?.drop();
});

/** Writes `count` attempts to the endpoint's log as the schema before migration 022 did (no position). */
async function logWithoutPositions(webhookId: string, count: number): Promise<string[]> {
  const delivery = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('webhook_id', '=', webhookId)
    .executeTakeFirstOrThrow();
  const ids: string[] = [];
  for (let n = 0; n < count; n += 1) {
    const id = randomUUID();
    await sql`INSERT INTO webhook_attempts (id, delivery_id, webhook_id, attempt, status_code, duration_ms, attempted_at)
              VALUES (${id}, ${delivery.id}, ${webhookId}, ${n + 1}, 500, 3, now())`.execute(db);
    ids.push(id);
  }
  return ids;
}

function positions(webhookId: string): Promise<Array<{ id: string; log_position: number }>> {
  return db
    .selectFrom('webhook_attempts')
    .select(['id', 'log_position'])
    .where('webhook_id', '=', webhookId)
    .orderBy('seq')
    .execute();
}

async function attemptsLogged(webhookId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select('attempts_logged')
    .where('id', '=', webhookId)
    .executeTakeFirstOrThrow();
  return row.attempts_logged;
}

describe('attempt log positions', () => {
  it('numbers existing logs in write order, then prunes exactly the line that falls out', async () => {
    const migrator = new Migrator({
      db,
      provider: { getMigrations: () => Promise.resolve(migrations) },
      allowUnorderedMigrations: true,
    });
    const before = await migrator.migrateTo(BEFORE_POSITIONS);
    expect(before.error).toBeUndefined();
    const full = await endpointWithEvents(db, 2);
    const short = await endpointWithEvents(db, 1);
    const silent = await endpointWithEvents(db, 1);
    const fullLog = await logWithoutPositions(full.webhookId, 5);
    const shortLog = await logWithoutPositions(short.webhookId, 2);

    await migrateToLatest(db);
    expect(await positions(full.webhookId)).toEqual(fullLog.map((id, n) => ({ id, log_position: n + 1 })));
    expect(await positions(short.webhookId)).toEqual(shortLog.map((id, n) => ({ id, log_position: n + 1 })));
    expect(await attemptsLogged(full.webhookId)).toBe(5);
    expect(await attemptsLogged(short.webhookId)).toBe(2);
    expect(await attemptsLogged(silent.webhookId)).toBe(0);

    // A log of five lines, kept at five: the next attempt takes position 6 and the first line goes.
    const pending = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', 'in', [full.webhookId, silent.webhookId])
      .execute();
    const now = new Date();
    const lease = { now, owner: 'positions-test', expiresAt: new Date(now.getTime() + 60_000) };
    const claimed = await claimDeliveries(
      db,
      pending.map((row) => row.id),
      lease,
    );
    expect(claimed).toHaveLength(3);
    const attemptIds = claimed.map(() => randomUUID());
    const outcomes = await recordAttempts(
      db,
      claimed.map((delivery, n) => ({
        lease: { deliveryId: delivery.id, owner: lease.owner, expiresAt: delivery.lease.expiresAt },
        state: { status: 'succeeded', attemptCount: 1, nextAttemptAt: null },
        attempt: {
          id: attemptIds[n]!,
          webhookId: delivery.webhookId,
          statusCode: 200,
          failureKind: null,
          excerpt: 'ok',
          durationMs: 4,
          attemptedAt: new Date(),
          // A refused payload is logged and numbered too, though it says nothing about the endpoint.
          affectsHealth: n !== 0,
          logSize: 5,
          disableAfterMs: 5 * 24 * 3_600_000,
        },
      })),
    );
    expect(outcomes.map((outcome) => outcome.outcome)).toEqual(['recorded', 'recorded', 'recorded']);
    const fullAttempts = claimed.flatMap((delivery, n) =>
      delivery.webhookId === full.webhookId ? [attemptIds[n]!] : [],
    );
    expect(await positions(full.webhookId)).toEqual([
      ...fullLog.slice(2).map((id, n) => ({ id, log_position: n + 3 })),
      ...fullAttempts.map((id, n) => ({ id, log_position: n + 6 })),
    ]);
    expect(await attemptsLogged(full.webhookId)).toBe(7);
    // An endpoint whose log was empty starts at 1; a short log loses nothing.
    const silentAttempt = attemptIds[claimed.findIndex((delivery) => delivery.webhookId === silent.webhookId)];
    expect(await positions(silent.webhookId)).toEqual([{ id: silentAttempt, log_position: 1 }]);
    expect(await attemptsLogged(silent.webhookId)).toBe(1);
    expect(await positions(short.webhookId)).toHaveLength(2);
  });
});
