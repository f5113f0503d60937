// The per-endpoint delivery counts that the statement triggers keep (db/functions/count_webhook_deliveries.sql)
// stay equal to a real count after inserts, updates that change some rows' status and leave others, and
// deletions; also on one connection whose trigger plans were first made for statements of a few rows
// and then serve one of thousands.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase, type Db } from '../src/database/connect.js';
import { seedBacklog, storedStatuses } from './support/backlog.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { endpointWithEvents } from './support/webhook-env.js';

let database: TestDatabase;
let oneConnection: Db;

beforeAll(async () => {
  database = await createTestDatabase();
  oneConnection = connectDatabase(database.url, { poolSize: 1 }).db;
});

afterAll(async () => {
  await oneConnection?.destroy();
  await database?.drop();
});

/** The endpoint's stored counts by status, with the statuses counted zero left out. */
async function keptCounts(webhookId: string): Promise<Record<string, number>> {
  const rows = await database.db
    .selectFrom('webhook_delivery_counts')
    .select(['status', 'count'])
    .where('webhook_id', '=', webhookId)
    .execute();
  return Object.fromEntries(
    rows.filter((row) => Number(row.count) !== 0).map((row) => [row.status, Number(row.count)]),
  );
}

describe('delivery counts kept by the triggers', () => {
  it('match a real count after small statements and then a large one on the same connection', async () => {
    const { orgId, webhookId } = await endpointWithEvents(database.db, 3);
    expect(await keptCounts(webhookId)).toEqual({ pending: 3 });

    // Small statements first, more than PL/pgSQL needs before it keeps a generic plan: a lease taken
    // and given back (no status changes), then one row ending.
    for (let round = 0; round < 8; round += 1) {
      await sql`UPDATE webhook_deliveries SET lease_owner = 'worker', lease_expires_at = now()
                WHERE webhook_id = ${webhookId}`.execute(oneConnection);
      await sql`UPDATE webhook_deliveries SET lease_owner = NULL, lease_expires_at = NULL
                WHERE webhook_id = ${webhookId}`.execute(oneConnection);
    }
    await sql`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL
              WHERE id = (SELECT id FROM webhook_deliveries WHERE webhook_id = ${webhookId} ORDER BY seq LIMIT 1)`.execute(
      oneConnection,
    );
    expect(await keptCounts(webhookId)).toEqual({ pending: 2, succeeded: 1 });

    // Then thousands of rows, in one statement that ends a third of the pending ones and only touches the rest.
    expect(await seedBacklog(oneConnection, orgId, webhookId, 3_000)).toBe(3_000);
    await sql`UPDATE webhook_deliveries
              SET status = CASE WHEN seq % 3 = 0 THEN 'abandoned' ELSE status END, lease_owner = NULL
              WHERE webhook_id = ${webhookId} AND status = 'pending'`.execute(oneConnection);
    const afterUpdate = await storedStatuses(database.db, webhookId);
    expect(afterUpdate.abandoned).toBeGreaterThan(900);
    expect(await keptCounts(webhookId)).toEqual(afterUpdate);

    await sql`DELETE FROM webhook_deliveries WHERE webhook_id = ${webhookId} AND seq % 2 = 0`.execute(oneConnection);
    expect(await keptCounts(webhookId)).toEqual(await storedStatuses(database.db, webhookId));
  });
});
