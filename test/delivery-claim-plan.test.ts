// A claim reads the deliveries it is given by their primary key, whatever the statistics say. Statistics
// taken while the queue was empty once let the planner read the claim's ids out of a partial index of
// pending deliveries instead, so each claim of a few dozen walked the whole due backlog. The plan is read
// from auto_explain, which sends it to this session as a notice.
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../db/schema.js';
import { claimDeliveries } from '../src/webhooks/delivery-queries.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { endpointWithEvents } from './support/webhook-env.js';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

let database: TestDatabase;
let explained: Kysely<Database>;
const plans: PlanNode[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  // One connection, so the settings below hold for every statement sent through it.
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  pool.on('connect', (client) => {
    client.on('notice', (notice) => {
      const text = notice.message ?? '';
      const start = text.indexOf('{');
      if (text.startsWith('duration:') && start >= 0)
        plans.push((JSON.parse(text.slice(start)) as { Plan: PlanNode }).Plan);
    });
  });
  explained = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  await sql`LOAD 'auto_explain'`.execute(explained);
  await sql`SET auto_explain.log_min_duration = 0`.execute(explained);
  await sql`SET auto_explain.log_format = 'json'`.execute(explained);
  await sql`SET auto_explain.log_level = 'notice'`.execute(explained);
});

afterAll(async () => {
  await explained?.destroy();
  await database?.drop();
});

/** Every node of a plan, depth first. */
function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

describe('delivery claims', () => {
  it('look their deliveries up by primary key when the statistics predate the backlog', async () => {
    // Statistics of an empty queue, then a backlog of due deliveries they know nothing of.
    await sql`ANALYZE webhook_deliveries`.execute(database.db);
    const { webhookId } = await endpointWithEvents(database.db, 3_000);
    const due = await database.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', webhookId)
      .orderBy('seq')
      .limit(80)
      .execute();
    const now = new Date(Date.now() + 1_000);

    plans.length = 0;
    const claimed = await claimDeliveries(
      explained,
      due.map((row) => row.id),
      { now, owner: 'plan-test', expiresAt: new Date(now.getTime() + 60_000) },
    );

    expect(claimed.map((delivery) => delivery.id).sort()).toEqual(due.map((row) => row.id).sort());
    const scans = plans
      .flatMap(nodesOf)
      .filter((node) => node['Relation Name'] === 'webhook_deliveries' && node['Node Type'].endsWith('Scan'));
    expect(scans.length).toBeGreaterThan(0);
    expect(scans.map((node) => `${node['Node Type']} ${node['Index Name'] ?? ''}`.trim())).toEqual(
      scans.map(() => 'Index Scan webhook_deliveries_pkey'),
    );
  });
});
