// Idempotency-Key handling for POST /calls: the first request with a key owns it; later ones replay or conflict.
import { createHash } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { Db } from '../database/connect.js';
import { DomainError } from '../errors.js';
import { IDEMPOTENCY_WINDOW_MS } from './policy.js';
import { claimIdempotencyKey, findIdempotencyRecord, saveIdempotentResponse } from './idempotency-queries.js';

type CallCreated = components['schemas']['CallCreated'];

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A fingerprint of a request body that ignores key order. */
export function requestFingerprint(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/**
 * Claims `key` for this transaction, or returns the response stored by the request that owns it.
 * Null means "claimed: go on and call rememberResponse". Throws DomainError idempotency_conflict when
 * the owner sent a different body.
 */
export async function claimOrReplay(
  trx: Db,
  request: { orgId: string; key: string; body: unknown; now: Date },
): Promise<CallCreated | null> {
  const requestHash = requestFingerprint(request.body);
  const claimed = await claimIdempotencyKey(trx, {
    orgId: request.orgId,
    key: request.key,
    requestHash,
    now: request.now,
    expiredBefore: new Date(request.now.getTime() - IDEMPOTENCY_WINDOW_MS),
  });
  if (claimed) return null;
  const record = await findIdempotencyRecord(trx, request.orgId, request.key);
  if (!record?.response) throw new Error('a live idempotency record has no stored response');
  if (record.request_hash !== requestHash) {
    throw new DomainError(
      'idempotency_conflict',
      'This Idempotency-Key was already used with a different request body.',
      {
        param: 'Idempotency-Key',
      },
    );
  }
  return record.response;
}

/** Stores the response a claimed key replays from now on (same transaction as the claim). */
export async function rememberResponse(
  trx: Db,
  record: { orgId: string; key: string; response: CallCreated },
): Promise<void> {
  await saveIdempotentResponse(trx, { ...record, callId: record.response.id });
}
