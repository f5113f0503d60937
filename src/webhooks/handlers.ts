// Handlers for the webhooks operations: HTTP in and out; the rules live in ./service.ts.
import { DEFAULT_LIMIT, pageStart, paginateFrom } from '../contract/pagination.js';
import type { OperationHandler } from '../contract/operations.js';
import { instantOf } from '../contract/instant.js';
import * as events from './event-log.js';
import * as webhooks from './service.js';

/** createWebhook: registers an endpoint; 201 with the endpoint and its secret. */
export const createWebhook: OperationHandler<'createWebhook'> = async ({ auth, body }, deps) => {
  const { webhook, secret } = await webhooks.createWebhook(deps, auth.orgId, body);
  return { status: 201, body: { data: webhook, secret } };
};

/** listWebhooks: one page of the org's endpoints, newest first. */
export const listWebhooks: OperationHandler<'listWebhooks'> = async ({ auth, query }, deps) => {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const start = pageStart(query);
  const { items, total, more } = await webhooks.listWebhooks(deps.db, auth.orgId, { limit, ...start });
  return { status: 200, body: { data: items, pagination: paginateFrom(start, limit, items.length, total, more) } };
};

/** getWebhook: one endpoint; 404 when not in the org. */
export const getWebhook: OperationHandler<'getWebhook'> = async ({ auth, params }, deps) => {
  return { status: 200, body: { data: await webhooks.getWebhook(deps.db, auth.orgId, params.id) } };
};

/** updateWebhook: changes events and/or active; 404 when not in the org. */
export const updateWebhook: OperationHandler<'updateWebhook'> = async ({ auth, params, body }, deps) => {
  return { status: 200, body: { data: await webhooks.updateWebhook(deps, auth.orgId, params.id, body) } };
};

/** deleteWebhook: 204 once attempts in flight are aborted and nothing more can be sent; 404 when not in the org. */
export const deleteWebhook: OperationHandler<'deleteWebhook'> = async ({ auth, params }, deps) => {
  await webhooks.deleteWebhook(deps, auth.orgId, params.id);
  return { status: 204, body: undefined };
};

/** testWebhook: sends a webhook.test event now and answers with the attempt's outcome. */
export const testWebhook: OperationHandler<'testWebhook'> = async ({ auth, params, traceparent }, deps) => {
  return { status: 200, body: { data: await webhooks.sendTestEvent(deps, auth.orgId, params.id, traceparent) } };
};

/** rotateWebhookSecret: a new secret, shown once; the old one signs for 24 more hours unless expire_previous. */
export const rotateWebhookSecret: OperationHandler<'rotateWebhookSecret'> = async ({ auth, params, query }, deps) => {
  const { webhook, secret } = await webhooks.rotateWebhookSecret(deps, auth.orgId, params.id, {
    expirePrevious: query.expire_previous ?? false,
  });
  return { status: 200, body: { data: webhook, secret } };
};

/** listWebhookDeliveries: one page of the endpoint's deliveries with their attempts, newest first. */
export const listWebhookDeliveries: OperationHandler<'listWebhookDeliveries'> = async (
  { auth, params, query },
  deps,
) => {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const start = pageStart(query);
  const { items, total, more } = await webhooks.listDeliveries(deps.db, auth.orgId, params.id, {
    limit,
    ...start,
    ...(query.status !== undefined ? { status: query.status } : {}),
  });
  return { status: 200, body: { data: items, pagination: paginateFrom(start, limit, items.length, total, more) } };
};

/** redeliverWebhookDelivery: 202 with a new pending delivery of the same event. */
export const redeliverWebhookDelivery: OperationHandler<'redeliverWebhookDelivery'> = async (
  { auth, params },
  deps,
) => {
  return {
    status: 202,
    body: { data: (await webhooks.redeliver(deps, auth.orgId, params.id, params.delivery_id)).delivery },
  };
};

/** listEvents: one page of the org's events, newest first, filtered by kind and creation time. */
export const listEvents: OperationHandler<'listEvents'> = async ({ auth, query }, deps) => {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const start = pageStart(query);
  const { items, total, more } = await events.listEvents(
    deps.db,
    auth.orgId,
    {
      ...(query.kind !== undefined ? { kind: query.kind } : {}),
      ...(query.created_after !== undefined ? { createdAfter: instantOf('created_after', query.created_after) } : {}),
      ...(query.created_before !== undefined
        ? { createdBefore: instantOf('created_before', query.created_before) }
        : {}),
    },
    { limit, start },
  );
  return { status: 200, body: { data: items, pagination: paginateFrom(start, limit, items.length, total, more) } };
};

/** getEvent: one event of the org, as its deliveries carry it; 404 when not in the org. */
export const getEvent: OperationHandler<'getEvent'> = async ({ auth, params }, deps) => {
  return { status: 200, body: { data: await events.getEvent(deps.db, auth.orgId, params.id) } };
};
