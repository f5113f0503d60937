// Handlers for the calls operations: HTTP in and out; the rules live in ./service.ts.
import { DEFAULT_LIMIT, pageStart, paginateFrom } from '../contract/pagination.js';
import type { OperationHandler } from '../contract/operations.js';
import { toCall, toCallDetail } from './mapper.js';
import * as calls from './service.js';

/** createCall: 201 with the queued call (replays carry Idempotent-Replayed). Errors: see placeCall in ./service.ts. */
export const createCall: OperationHandler<'createCall'> = async (input, deps) => {
  const { call, replayed } = await calls.placeCall(deps, {
    auth: input.auth,
    body: input.body,
    idempotencyKey: input.headers['Idempotency-Key'],
  });
  return { status: 201, body: { data: call }, ...(replayed ? { headers: { 'Idempotent-Replayed': 'true' } } : {}) };
};

/** listCalls: 200 with one page of calls, newest first. Errors: not_found (campaign_id), invalid_request (a cursor). */
export const listCalls: OperationHandler<'listCalls'> = async (input, deps) => {
  const limit = input.query.limit ?? DEFAULT_LIMIT;
  const start = pageStart(input.query);
  const { rows, total, more } = await calls.listCalls(deps.db, input.auth.orgId, {
    status: input.query.status,
    campaignId: input.query.campaign_id,
    limit,
    start,
  });
  return {
    status: 200,
    body: { data: rows.map(toCall), pagination: paginateFrom(start, limit, rows.length, total, more) },
  };
};

/** getCall: 200 with the call, its timeline and (once completed) its transcript. Errors: not_found. */
export const getCall: OperationHandler<'getCall'> = async (input, deps) => {
  const { call, timeline } = await calls.getCall(deps.db, input.auth.orgId, input.params.id);
  return { status: 200, body: { data: toCallDetail(call, timeline) } };
};

/** cancelCall: 200 with the call after cancellation. Errors: not_found, invalid_state. */
export const cancelCall: OperationHandler<'cancelCall'> = async (input, deps) => {
  const call = await calls.cancelCall(deps, input.auth.orgId, input.params.id, input.traceparent);
  return { status: 200, body: { data: toCall(call) } };
};
