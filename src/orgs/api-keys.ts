// API keys: issuing (CSPRNG, only a hash stored), parsing, verifying in constant time, revoking.
import { hash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { Db } from '../database/connect.js';
import { recordAudit } from '../audit/service.js';
import { DomainError } from '../errors.js';
import * as keys from './api-key-queries.js';
import { isLive, modeOf, orgForMode, type Mode } from './modes.js';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const PREFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const KEY_PATTERN = /^svc_(live|test)_([a-z0-9]{8})_([A-Za-z0-9]{32})$/;

function randomString(alphabet: string, length: number): string {
  let out = '';
  for (let i = 0; i < length; i += 1) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** The stored form of a key's secret. The secret has 190 bits of entropy, so a fast hash suffices. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Splits a full key into its mode, prefix and secret; null when it is not of the documented form. */
export function parseApiKey(key: string): { mode: Mode; prefix: string; secret: string } | null {
  const match = KEY_PATTERN.exec(key);
  return match ? { mode: match[1] as Mode, prefix: match[2]!, secret: match[3]! } : null;
}

/** Whether `secret` hashes to `expectedHash` (raw bytes, as hashSecret's hex decodes), compared in constant time. */
export function secretMatches(secret: string, expectedHash: Buffer): boolean {
  const actual = hash('sha256', secret, 'buffer');
  return actual.length === expectedHash.length && timingSafeEqual(actual, expectedHash);
}

/**
 * The key a text names: its prefix, and its mode when the text is a whole or masked key
 * (`svc_test_ab12cd34_…`); a bare prefix names no mode.
 */
export function keyNamedBy(text: string): { prefix: string; mode?: Mode } {
  const match = /^svc_(live|test)_([a-z0-9]{8})(?:_.*)?$/s.exec(text);
  return match ? { prefix: match[2]!, mode: match[1] as Mode } : { prefix: text };
}

/** Masks a key of `mode` for display: only its mode and public prefix stay readable. */
export function maskKey(prefix: string, mode: Mode): string {
  return `svc_${mode}_${prefix}_${'*'.repeat(32)}`;
}

/** The longest label a key may have. */
export const MAX_KEY_LABEL_LENGTH = 100;

/** Who asks for a key change, for the audit log: `cli` or a dashboard user's email, and the client address. */
export interface KeyActor {
  actor: string;
  address: string | null;
}

/**
 * Issues a new key of `mode` (live by default) for the live org `liveOrgId` and returns the full key
 * (shown once) with its prefix; a test key belongs to the org's test twin.
 */
export async function issueApiKey(
  db: Db,
  liveOrgId: string,
  options: { label?: string | null; createdBy?: string | null; mode?: Mode } = {},
): Promise<{ key: string; prefix: string; id: string }> {
  const { mode = 'live', ...details } = options;
  const orgId = await orgForMode(db, liveOrgId, mode);
  // randomBytes warms the CSPRNG pool; randomInt draws from the same CSPRNG without modulo bias.
  randomBytes(1);
  const prefix = randomString(PREFIX_ALPHABET, 8);
  const secret = randomString(ALPHANUMERIC, 32);
  const row = await keys.insertApiKey(db, { orgId, prefix, secretHash: hashSecret(secret), ...details });
  return { key: `svc_${mode}_${prefix}_${secret}`, prefix, id: row.id };
}

/**
 * Issues a key for an org on someone's behalf (the CLI or a dashboard user) and records it in the audit
 * log. Throws invalid_request (param label) for a label over MAX_KEY_LABEL_LENGTH characters.
 */
export async function createApiKey(
  db: Db,
  liveOrgId: string,
  input: { label: string | null; mode: Mode },
  by: KeyActor,
): Promise<{ key: string; prefix: string; id: string }> {
  const label = input.label?.trim() || null;
  if (label && label.length > MAX_KEY_LABEL_LENGTH) {
    throw new DomainError('invalid_request', `label: must have at most ${MAX_KEY_LABEL_LENGTH} characters`, {
      param: 'label',
    });
  }
  return db.transaction().execute(async (trx) => {
    const issued = await issueApiKey(trx, liveOrgId, { label, createdBy: by.actor, mode: input.mode });
    await recordAudit(trx, {
      orgId: liveOrgId,
      livemode: isLive(input.mode),
      ...by,
      action: 'api_key.created',
      target: maskKey(issued.prefix, input.mode),
    });
    return issued;
  });
}

/**
 * The live org's keys of both modes (id, public prefix, mode, label, creator, created, last used and
 * revoked times), newest first.
 */
export async function listKeys(db: Db, liveOrgId: string) {
  return (await keys.listKeys(db, liveOrgId)).map(({ livemode, ...key }) => ({ ...key, mode: modeOf(livemode) }));
}

/**
 * Revokes the active key with this prefix (only among the live org `liveOrgId`'s keys, and only of
 * `mode`, when given), and records it in the audit log; false when there is no such key.
 */
export async function revokeKey(
  db: Db,
  prefix: string,
  by: KeyActor,
  scope: { liveOrgId?: string; mode?: Mode } = {},
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const owner = await keys.revokeKey(trx, prefix, new Date(), scope);
    if (owner === undefined) return false;
    await recordAudit(trx, {
      orgId: owner.accountOrgId,
      livemode: owner.livemode,
      ...by,
      action: 'api_key.revoked',
      target: maskKey(prefix, modeOf(owner.livemode)),
    });
    return true;
  });
}
