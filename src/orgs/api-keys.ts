// API keys: issuing (CSPRNG, only a hash stored), parsing, verifying in constant time, revoking.
import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Db } from '../database/connect.js';
import { recordAudit } from '../audit/service.js';
import { DomainError } from '../errors.js';
import * as keys from './api-key-queries.js';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const KEY_PATTERN = /^svc_live_([a-z0-9]{8})_([A-Za-z0-9]{32})$/;

function randomString(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** The stored form of a key's secret. The secret has 190 bits of entropy, so a fast hash suffices. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Splits a full key into prefix and secret; null when it is not of the documented form. */
export function parseApiKey(key: string): { prefix: string; secret: string } | null {
  const match = KEY_PATTERN.exec(key);
  return match ? { prefix: match[1]!, secret: match[2]! } : null;
}

/** Whether `secret` hashes to `expectedHash` (raw bytes, as hashSecret's hex decodes), compared in constant time. */
export function secretMatches(secret: string, expectedHash: Buffer): boolean {
  const actual = hash('sha256', secret, 'buffer');
  return actual.length === expectedHash.length && timingSafeEqual(actual, expectedHash);
}

/**
 * The prefix named by `text`: the bare prefix, or a key written out from it (`svc_live_PREFIX`, the
 * masked key lists show, or the whole key). Anything else is returned as it is, to be looked up as is.
 */
export function keyPrefixOf(text: string): string {
  return /^svc_live_([a-z0-9]{8})(?:_.*)?$/s.exec(text)?.[1] ?? text;
}

/** Masks a key for display: only the public prefix stays readable. */
export function maskKey(prefix: string): string {
  return `svc_live_${prefix}_${'*'.repeat(32)}`;
}

/** The longest label a key may have. */
export const MAX_KEY_LABEL_LENGTH = 100;

/** Who asks for a key change, for the audit log: `cli` or a dashboard user's email, and the client address. */
export interface KeyActor {
  actor: string;
  address: string | null;
}

/** Issues a new key for an org and returns the full key (shown once) with its prefix. */
export async function issueApiKey(
  db: Db,
  orgId: string,
  options: { label?: string | null; createdBy?: string | null } = {},
): Promise<{ key: string; prefix: string; id: string }> {
  // randomBytes warms the CSPRNG pool; randomInt draws from the same CSPRNG without modulo bias.
  randomBytes(1);
  const prefix = randomString(PREFIX_ALPHABET, 8);
  const secret = randomString(ALPHANUMERIC, 32);
  const row = await keys.insertApiKey(db, { orgId, prefix, secretHash: hashSecret(secret), ...options });
  return { key: `svc_live_${prefix}_${secret}`, prefix, id: row.id };
}

/**
 * Issues a key for an org on someone's behalf (the CLI or a dashboard user) and records it in the audit
 * log. Throws invalid_request (param label) for a label over MAX_KEY_LABEL_LENGTH characters.
 */
export async function createApiKey(
  db: Db,
  orgId: string,
  input: { label: string | null },
  by: KeyActor,
): Promise<{ key: string; prefix: string; id: string }> {
  const label = input.label?.trim() || null;
  if (label && label.length > MAX_KEY_LABEL_LENGTH) {
    throw new DomainError('invalid_request', `label: must have at most ${MAX_KEY_LABEL_LENGTH} characters`, {
      param: 'label',
    });
  }
  return db.transaction().execute(async (trx) => {
    const issued = await issueApiKey(trx, orgId, { label, createdBy: by.actor });
    await recordAudit(trx, { orgId, ...by, action: 'api_key.created', target: maskKey(issued.prefix) });
    return issued;
  });
}

/** The org's keys (id, public prefix, label, creator, created, last used and revoked times), newest first. */
export async function listKeys(db: Db, orgId: string) {
  return keys.listKeys(db, orgId);
}

/**
 * Revokes the active key with this prefix (only among `orgId`'s keys when given) and records it in the
 * audit log; false when there is no such key.
 */
export async function revokeKey(db: Db, prefix: string, by: KeyActor, orgId?: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const owner = await keys.revokeKey(trx, prefix, new Date(), orgId);
    if (owner === undefined) return false;
    await recordAudit(trx, { orgId: owner, ...by, action: 'api_key.revoked', target: maskKey(prefix) });
    return true;
  });
}
