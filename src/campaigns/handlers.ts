// Handlers for the Campaigns operations: HTTP in, service call, response out.
import type { OperationHandler } from '../contract/operations.js';
import { DEFAULT_LIMIT, pageStart, paginateFrom } from '../contract/pagination.js';
import * as campaigns from './service.js';
import { wakeCampaign } from './dispatch/worker.js';

/** createCampaign: 201 with the campaign (replays carry Idempotent-Replayed). Errors: see createCampaign in ./service.ts. */
export const createCampaign: OperationHandler<'createCampaign'> = async ({ body, auth, headers }, deps) => {
  const { campaign, replayed } = await campaigns.createCampaign(deps.db, {
    auth,
    body,
    idempotencyKey: headers['Idempotency-Key'],
    now: deps.clock.now(),
  });
  if (!replayed) await wakeCampaign(deps, campaign.id);
  return { status: 201, body: { data: campaign }, ...(replayed ? { headers: { 'Idempotent-Replayed': 'true' } } : {}) };
};

/** listCampaigns: newest first, by offset or cursor, optionally in one status. */
export const listCampaigns: OperationHandler<'listCampaigns'> = async ({ query, auth }, { db }) => {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const start = pageStart(query);
  const { items, total, more } = await campaigns.listCampaigns(db, auth.orgId, {
    limit,
    status: query.status,
    ...start,
  });
  return { status: 200, body: { data: items, pagination: paginateFrom(start, limit, items.length, total, more) } };
};

/** getCampaign: 200 with the campaign and its counters. Errors: not_found. */
export const getCampaign: OperationHandler<'getCampaign'> = async ({ params, auth }, { db }) => ({
  status: 200,
  body: { data: await campaigns.getCampaign(db, auth.orgId, params.id) },
});

/** pauseCampaign: 200 with the campaign paused. Errors: not_found, invalid_state. */
export const pauseCampaign: OperationHandler<'pauseCampaign'> = async ({ params, auth }, { db }) => ({
  status: 200,
  body: { data: await campaigns.pauseCampaign(db, auth.orgId, params.id) },
});

/** resumeCampaign: 200 with the campaign no longer paused (its dispatch woken). Errors: not_found, invalid_state. */
export const resumeCampaign: OperationHandler<'resumeCampaign'> = async ({ params, auth }, deps) => {
  const campaign = await campaigns.resumeCampaign(deps.db, auth.orgId, params.id, deps.clock.now());
  await wakeCampaign(deps, campaign.id);
  return { status: 200, body: { data: campaign } };
};

/** cancelCampaign: 200 with the campaign canceled (its dispatch woken to finish it). Errors: not_found, invalid_state. */
export const cancelCampaign: OperationHandler<'cancelCampaign'> = async ({ params, auth }, deps) => {
  const campaign = await campaigns.cancelCampaign(deps.db, auth.orgId, params.id);
  await wakeCampaign(deps, campaign.id);
  return { status: 200, body: { data: campaign } };
};

/** listCampaignContacts: the campaign's contacts in its order, by offset or cursor. Errors: not_found. */
export const listCampaignContacts: OperationHandler<'listCampaignContacts'> = async (
  { params, query, auth },
  { db },
) => {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const start = pageStart(query);
  const { items, total, more } = await campaigns.listCampaignContacts(db, auth.orgId, params.id, { limit, ...start });
  return { status: 200, body: { data: items, pagination: paginateFrom(start, limit, items.length, total, more) } };
};
