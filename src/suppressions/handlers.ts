// Handlers for the Suppressions operations (the do-not-call list): HTTP in, service call, response out.
import type { OperationHandler } from '../contract/operations.js';
import { DEFAULT_LIMIT, pageStart, paginateFrom } from '../contract/pagination.js';
import * as suppressions from './service.js';

/** createSuppression: 201 with a new entry, 200 with an existing one whose reason and note were replaced. */
export const createSuppression: OperationHandler<'createSuppression'> = async ({ body, auth }, { db }) => {
  const { suppression, created } = await suppressions.addSuppression(db, auth.orgId, body, 'api');
  return { status: created ? 201 : 200, body: { data: suppression } };
};

/** listSuppressions: newest first, by offset or cursor, optionally by reason or for one number. */
export const listSuppressions: OperationHandler<'listSuppressions'> = async ({ query, auth }, { db }) => {
  const limit = query.limit ?? DEFAULT_LIMIT;
  const start = pageStart(query);
  const { items, total, more } = await suppressions.listSuppressions(db, auth.orgId, {
    limit,
    ...start,
    ...(query.reason === undefined ? {} : { reason: query.reason }),
    ...(query.phone_e164 === undefined ? {} : { phone: query.phone_e164 }),
  });
  return { status: 200, body: { data: items, pagination: paginateFrom(start, limit, items.length, total, more) } };
};

/** deleteSuppression: 204. Errors: not_found (param phone_e164) when the number is not on the list. */
export const deleteSuppression: OperationHandler<'deleteSuppression'> = async ({ params, auth }, { db }) => {
  await suppressions.removeSuppression(db, auth.orgId, params.phone_e164);
  return { status: 204, body: undefined };
};
