// A large backlog of pending deliveries, written with set-based SQL (a statement per 5,000, not one API call
// per event), for the tests and the benchmark of switching off and deleting a busy endpoint.
import { sql } from 'kysely';
import type { Db } from '../../src/database/connect.js';
import { contactCreated } from './webhook-env.js';

/** Rows one seeding statement writes: each stays well inside the statement timeout. */
const SEED_BATCH = 5_000;

/**
 * Queues `count` contact.created events to the endpoint as pending deliveries due now, with one
 * set-based statement per SEED_BATCH; returns how many were written.
 */
export async function seedBacklog(db: Db, orgId: string, webhookId: string, count: number): Promise<number> {
  const data = JSON.stringify(contactCreated('Backlog'));
  let written = 0;
  while (written < count) {
    const rows = Math.min(SEED_BATCH, count - written);
    const result = await sql`
      WITH queued AS (
        INSERT INTO events (id, org_id, kind, data, created_at)
        SELECT 'evt_' || substr(md5(random()::text || g::text), 1, 24), ${orgId}, 'contact.created', ${data}::jsonb, now()
        FROM generate_series(1, ${rows}) AS g
        RETURNING id
      )
      INSERT INTO webhook_deliveries (webhook_id, org_id, event_id, status, next_attempt_at, created_at)
      SELECT ${webhookId}, ${orgId}, id, 'pending', now(), now() FROM queued`.execute(db);
    written += Number(result.numAffectedRows ?? 0);
  }
  return written;
}

/** How many of the endpoint's deliveries are stored in each status. */
export async function storedStatuses(db: Db, webhookId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
    .where('webhook_id', '=', webhookId)
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]));
}
