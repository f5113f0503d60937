// Idempotency-Key handling for POST /calls: the first request with a key owns it; later ones replay or conflict.
import { createHash } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { Db } from '../database/connect.js';
import { DomainError } from '../errors.js';
import { IDEMPOTENCY_WINDOW_MS } from './policy.js';
import {
  claimIdempotencyKey,
  deleteIdempotencyRecord,
  findIdempotencyRecord,
  saveIdempotentResponse,
} from './idempotency-queries.js';

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
 * Claims `key` for this transaction (`claimed`), or returns what the request that owns it left: its
 * response, or null while that request's placement is still under way (see awaitResponse). Throws
 * DomainError idempotency_conflict when the owner sent a different body.
 */
export async function claimOrReplay(
  trx: Db,
  request: { orgId: string; key: string; body: unknown; now: Date },
): Promise<{ claimed: true } | { claimed: false; response: CallCreated | null }> {
  const requestHash = requestFingerprint(request.body);
  const claimed = await claimIdempotencyKey(trx, {
    orgId: request.orgId,
    key: request.key,
    requestHash,
    now: request.now,
    expiredBefore: new Date(request.now.getTime() - IDEMPOTENCY_WINDOW_MS),
  });
  if (claimed) return { claimed: true };
  const record = await findIdempotencyRecord(trx, request.orgId, request.key);
  if (!record) throw new Error('a live idempotency record vanished within its transaction');
  if (record.request_hash !== requestHash) {
    throw new DomainError(
      'idempotency_conflict',
      'This Idempotency-Key was already used with a different request body.',
      {
        param: 'Idempotency-Key',
      },
    );
  }
  return { claimed: false, response: record.response };
}

/**
 * Waits, polling every `pollMs`, until the request owning `key` has stored its response (returned), or
 * its placement came to nothing and the key is free again (null); throws DomainError service_unavailable
 * with Retry-After when neither happens within `timeoutMs`.
 */
export async function awaitResponse(
  db: Db,
  record: { orgId: string; key: string; timeoutMs: number; pollMs: number },
): Promise<CallCreated | null> {
  const deadline = Date.now() + record.timeoutMs;
  for (;;) {
    const found = await findIdempotencyRecord(db, record.orgId, record.key);
    if (!found) return null;
    if (found.response) return found.response;
    if (Date.now() >= deadline) {
      throw new DomainError(
        'service_unavailable',
        'A request with this Idempotency-Key is still being placed with the voice provider; retry with the same key in 5 seconds to get its outcome.',
        { headers: { 'Retry-After': '5' } },
      );
    }
    await new Promise((resolve) => setTimeout(resolve, record.pollMs));
  }
}

/** Frees a claimed key whose placement came to nothing, so the same key may try again. */
export async function forgetKey(trx: Db, record: { orgId: string; key: string }): Promise<void> {
  await deleteIdempotencyRecord(trx, record.orgId, record.key);
}

/** Stores the response a claimed key replays from now on (same transaction as the claim). */
export async function rememberResponse(
  trx: Db,
  record: { orgId: string; key: string; response: CallCreated },
): Promise<void> {
  await saveIdempotentResponse(trx, { ...record, callId: record.response.id });
}
