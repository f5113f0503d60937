// Fixtures for tests derived from the spec: an org owning one resource of each kind (made through the
// API from the spec's own request examples), what each path parameter and body id refers to, and a
// sender that fills in an operation's path, body and headers.
import { expect } from 'vitest';
import type { Db } from '../../src/database/connect.js';
import { issueApiKey } from '../../src/orgs/api-keys.js';
import { orgForMode } from '../../src/orgs/modes.js';
import { createTestOrg, rawRequest, type TestApp, type TestOrg } from './app.js';
import type { Operation } from '../../src/conformance/spec/operations.js';
import { fillPath, pathParameterNames, pathPrefix } from '../../src/conformance/spec/paths.js';
import { publishedOperations } from './spec/published.js';

/** An org with one resource of each kind. */
export interface OwnedOrg extends TestOrg {
  callId: string;
  contactId: string;
  webhookId: string;
  deliveryId: string;
  /** The event of that delivery (its contact's contact.created). */
  eventId: string;
  /** Where its webhook endpoint delivers. */
  receiverUrl: string;
  /** The Idempotency-Key its call was placed with. */
  idempotencyKey: string;
  /** A number on its do-not-call list, its own (no other org's or mode's fixture lists it). */
  suppressedPhone: string;
  /** A campaign over its contacts (still scheduled: nothing dispatches). */
  campaignId: string;
}

/** What each path parameter refers to, keyed `name@path prefix`. A new kind of path id needs a line here. */
const PATH_FIXTURES: Record<string, (org: OwnedOrg) => string> = {
  'id@/calls/{id}': (org) => org.callId,
  'id@/contacts/{id}': (org) => org.contactId,
  'id@/agents/{id}': (org) => org.agentId,
  'id@/webhooks/{id}': (org) => org.webhookId,
  'delivery_id@/webhooks/{id}/deliveries/{delivery_id}': (org) => org.deliveryId,
  'id@/events/{id}': (org) => org.eventId,
  'phone_e164@/suppressions/{phone_e164}': (org) => org.suppressedPhone,
  'id@/campaigns/{id}': (org) => org.campaignId,
};

/** Request-body fields that hold a resource's id (format uuid) or a value tied to the org. A new one needs a line here. */
export const BODY_FIXTURES: Record<string, (org: OwnedOrg) => string> = {
  agent_id: (org) => org.agentId,
  url: (org) => org.receiverUrl,
};

/**
 * Query parameters that name a resource of the org by id (format uuid), with what each refers to. A new
 * one needs a line here. The cursors are ids too, but one that names no item of the list is
 * 400 invalid_request (test/cursor-paging.test.ts), so they are not among them.
 */
export const QUERY_FIXTURES: Record<string, (org: OwnedOrg) => string> = {
  campaign_id: (org) => org.campaignId,
};

const CURSORS = new Set(['starting_after', 'ending_before']);

/** The names of the operation's query parameters that hold a resource's id (format uuid), the cursors aside. */
export function queryIdParameters(operation: Operation): string[] {
  return operation.parameters
    .filter((parameter) => parameter.in === 'query' && parameter.schema.format === 'uuid')
    .map((parameter) => parameter.name)
    .filter((name) => !CURSORS.has(name));
}

/** The operation with this id; throws when the spec has none. */
export function operationById(id: string): Operation {
  const found = publishedOperations.find((candidate) => candidate.id === id);
  if (!found) throw new Error(`the spec has no operation ${id}`);
  return found;
}

/** The values of an operation's path parameters, each taken from the org `owners[name]`; throws when one has no fixture. */
export function pathIds(operation: Operation, owners: Record<string, OwnedOrg>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of pathParameterNames(operation.path)) {
    const key = `${name}@${pathPrefix(operation.path, name)}`;
    const fixture = PATH_FIXTURES[key];
    if (!fixture) throw new Error(`${operation.id}: no fixture for path parameter "${key}"; add one to PATH_FIXTURES`);
    values[name] = fixture(owners[name]!);
  }
  return values;
}

/** The operation's path with every id taken from `org`. */
export function ownPath(operation: Operation, org: OwnedOrg): string {
  return fillPath(
    operation.path,
    pathIds(operation, Object.fromEntries(pathParameterNames(operation.path).map((name) => [name, org]))),
  );
}

/** The spec's example body with the org-bound fields set for `org`; throws when the spec gives no example or a body id has no fixture. */
export function exampleBody(operation: Operation, org: OwnedOrg): Record<string, unknown> | undefined {
  if (!operation.body) return undefined;
  const [example] = operation.body.examples;
  if (example === undefined) throw new Error(`${operation.id}: the spec gives no request body example`);
  const body = { ...(example as Record<string, unknown>) };
  for (const field of Object.keys(body)) {
    if (field in BODY_FIXTURES) body[field] = BODY_FIXTURES[field]!(org);
    else if (operation.body.schema.properties?.[field]?.format === 'uuid') {
      throw new Error(`${operation.id}: no fixture for body field "${field}"; add one to BODY_FIXTURES`);
    }
  }
  return body;
}

/**
 * Sends an operation as `caller` (with an Idempotency-Key when given and the operation takes one); the
 * answer's body has the type the caller declares.
 */
export function sendOperation<T = unknown>(
  app: TestApp,
  operation: Operation,
  caller: TestOrg,
  path: string,
  body?: unknown,
  idempotencyKey?: string,
) {
  const headers: Record<string, string> = { Authorization: `Bearer ${caller.key}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (idempotencyKey && operation.parameters.some((parameter) => parameter.name === 'Idempotency-Key')) {
    headers['Idempotency-Key'] = idempotencyKey;
  }
  return rawRequest<T>(app, operation.method, path, {
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/**
 * Creates an org (on `planId`) and, through the API from the spec's examples, a webhook to
 * `receiverUrl`, a contact (which queues a delivery to it), a call, a campaign and a do-not-call entry. Run the app without workers
 * and with a slow simulator to keep them as they are.
 */
export async function createOwnedOrg(
  app: TestApp,
  db: Db,
  receiverUrl: string,
  name: string,
  planId = 'scale',
): Promise<OwnedOrg> {
  return ownResources(app, db, await createTestOrg(db, { planId }), receiverUrl, name);
}

/**
 * The same resources as createOwnedOrg's, made through the API with a test key of `live`'s org: the
 * org's test-mode twin owning one resource of each kind (the agent is the live org's, shared).
 */
export async function createOwnedTestMode(
  app: TestApp,
  db: Db,
  live: TestOrg,
  receiverUrl: string,
  name: string,
): Promise<OwnedOrg> {
  const { key } = await issueApiKey(db, live.orgId, { mode: 'test' });
  const org = { orgId: await orgForMode(db, live.orgId, 'test'), agentId: live.agentId, key };
  return ownResources(app, db, org, receiverUrl, name);
}

/** Makes one resource of each kind for `org` through the API (see createOwnedOrg). */
async function ownResources(app: TestApp, db: Db, org: TestOrg, receiverUrl: string, name: string): Promise<OwnedOrg> {
  const owned: OwnedOrg = {
    ...org,
    callId: '',
    contactId: '',
    webhookId: '',
    deliveryId: '',
    eventId: '',
    receiverUrl,
    idempotencyKey: `fixture-${name}`,
    // From the org's id: distinct for every org and mode, so a foreign one is never the caller's own.
    suppressedPhone: `+9170${String(parseInt(org.orgId.slice(0, 8), 16) % 1e8).padStart(8, '0')}`,
    campaignId: '',
  };
  const create = async (id: string, status: number, key?: string) => {
    const operation = operationById(id);
    const response = await sendOperation<{ data: { id: string } }>(
      app,
      operation,
      owned,
      operation.path,
      exampleBody(operation, owned),
      key,
    );
    expect(response.status, `${id}: ${JSON.stringify(response.body)}`).toBe(status);
    return response.body;
  };
  owned.webhookId = (await create('createWebhook', 201)).data.id;
  owned.contactId = (await create('upsertContact', 201)).data.id;
  owned.callId = (await create('createCall', 201, owned.idempotencyKey)).data.id;
  // After the contact: the example chooses the org's contacts by their consent.
  owned.campaignId = (await create('createCampaign', 201)).data.id;
  const suppression = operationById('createSuppression');
  const listed = await sendOperation(app, suppression, owned, suppression.path, {
    ...exampleBody(suppression, owned),
    phone_e164: owned.suppressedPhone,
  });
  expect(listed.status, `createSuppression: ${JSON.stringify(listed.body)}`).toBe(201);
  const delivery = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'event_id'])
    .where('webhook_id', '=', owned.webhookId)
    .executeTakeFirstOrThrow();
  owned.deliveryId = delivery.id;
  owned.eventId = delivery.event_id;
  return owned;
}
