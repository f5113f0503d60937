// Handlers for the Contacts operations: HTTP in, service call, response body out.
import type { OperationHandler } from '../contract/operations.js';
import { DEFAULT_LIMIT, paginate } from '../contract/pagination.js';
import * as contacts from './service.js';
import { toUpsertResult } from './mapper.js';

/** POST /contacts: create or update by phone number; always 200. */
export const upsertContact: OperationHandler<'upsertContact'> = async ({ body, auth }, { db }) => {
  const row = await contacts.upsertContact(db, auth.orgId, body);
  return { status: 200, body: { data: toUpsertResult(row) } };
};

/** GET /contacts: newest first, optionally filtered by consent_capture. */
export const listContacts: OperationHandler<'listContacts'> = async ({ query, auth }, { db }) => {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const offset = query.offset ?? 0;
  const { items, total } = await contacts.listContacts(db, auth.orgId, {
    limit,
    offset,
    consent: query.consent_capture,
  });
  return { status: 200, body: { data: items, pagination: paginate(limit, offset, items.length, total) } };
};
