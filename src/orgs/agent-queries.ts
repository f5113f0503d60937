// SQL for reading agents.
import type { Db } from '../database/connect.js';

/** The agent with this id in this org, or undefined (also for another org's agent). */
export async function findAgentInOrg(db: Db, orgId: string, agentId: string) {
  return db.selectFrom('agents').selectAll().where('id', '=', agentId).where('org_id', '=', orgId).executeTakeFirst();
}

/** The org's agents, newest first. */
export async function listAgents(db: Db, orgId: string) {
  return db.selectFrom('agents').selectAll().where('org_id', '=', orgId).orderBy('created_at', 'desc').execute();
}

/** One page of the org's agents, newest first (ties by id), with the total. */
export async function listAgentsPage(db: Db, orgId: string, page: { limit: number; offset: number }) {
  const base = db.selectFrom('agents').where('org_id', '=', orgId);
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}
