// Handlers for the Contacts operations: HTTP in, service call, response body out.
import type { OperationHandler } from '../contract/operations.js';
import { DEFAULT_LIMIT, pageStart, paginateFrom } from '../contract/pagination.js';
import * as contacts from './service.js';

/** upsertContact: create or update by phone number; 201 when created, 200 when updated, with the contact as stored. */
export const upsertContact: OperationHandler<'upsertContact'> = async ({ body, auth, traceparent }, { db }) => {
  const { contact, created } = await contacts.upsertContact(db, auth.orgId, body, traceparent);
  return { status: created ? 201 : 200, body: { data: contact } };
};

/** getContact: 200 with the contact. Errors: not_found. */
export const getContact: OperationHandler<'getContact'> = async ({ params, auth }, { db }) => {
  return { status: 200, body: { data: await contacts.getContact(db, auth.orgId, params.id) } };
};

/** GET /contacts: newest first, optionally filtered by consent_capture. */
export const listContacts: OperationHandler<'listContacts'> = async ({ query, auth }, { db }) => {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const start = pageStart(query);
  const { items, total, more } = await contacts.listContacts(db, auth.orgId, {
    limit,
    ...start,
    consent: query.consent_capture,
  });
  return { status: 200, body: { data: items, pagination: paginateFrom(start, limit, items.length, total, more) } };
};
