// SQL for reading agents.
import type { Db } from '../database/connect.js';
import { countRows, readPageAndTotal, type PageStart } from '../database/keyset.js';

/** The agent with this id in this org, or undefined (also for another org's agent). */
export async function findAgentInOrg(db: Db, orgId: string, agentId: string) {
  return db.selectFrom('agents').selectAll().where('id', '=', agentId).where('org_id', '=', orgId).executeTakeFirst();
}

/** The org's agents, newest first. */
export async function listAgents(db: Db, orgId: string) {
  return db.selectFrom('agents').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').execute();
}

/**
 * One page of the org's agents, newest first (ties by id), with the total: by offset, or the agents on
 * one side of a cursor agent, with whether more lie beyond the page (always false for an offset page).
 */
export async function listAgentsPage(db: Db, orgId: string, page: { limit: number } & PageStart) {
  const matching = db.selectFrom('agents').where('org_id', '=', orgId);
  return readPageAndTotal(
    { rows: matching.selectAll(), table: 'agents', columns: ['created_at', 'id'] },
    () => countRows(matching),
    { limit: page.limit, start: page },
  );
}

/** How many agents use each provider, across every org. */
export async function countAgentsByProvider(db: Db): Promise<Array<{ provider: string; agents: number }>> {
  const rows = await db
    .selectFrom('agents')
    .select(['provider', (eb) => eb.fn.countAll<string>().as('agents')])
    .groupBy('provider')
    .execute();
  return rows.map((row) => ({ provider: row.provider, agents: Number(row.agents) }));
}
