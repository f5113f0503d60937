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
