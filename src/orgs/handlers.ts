// Handlers for the agents operations: HTTP in and out; the rules live in ./service.ts.
import type { OperationHandler } from '../contract/operations.js';
import { DEFAULT_LIMIT, pageStart, paginateFrom } from '../contract/pagination.js';
import * as orgs from './service.js';

/** listAgents: one page of the org's agents, newest first. */
export const listAgents: OperationHandler<'listAgents'> = async ({ query, auth }, { db }) => {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const start = pageStart(query);
  const { items, total, more } = await orgs.listAgentsPage(db, auth.accountOrgId, { limit, ...start });
  return { status: 200, body: { data: items, pagination: paginateFrom(start, limit, items.length, total, more) } };
};

/** getAgent: 200 with the agent. Errors: not_found. */
export const getAgent: OperationHandler<'getAgent'> = async ({ params, auth }, { db }) => {
  return { status: 200, body: { data: await orgs.getAgent(db, auth.accountOrgId, params.id) } };
};
