// SQL for API keys and the org/plan facts needed to authorise a request.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import type { Mode } from './modes.js';

export interface KeyLookup {
  /** The org the key's requests read and write: the live org, or its test twin for a test key. */
  orgId: string;
  /** The live org the key belongs to (its agents, members and plan). */
  accountOrgId: string;
  /** Whether the key is a live key (its org is a live org). */
  livemode: boolean;
  /** The SHA-256 of the key's secret, as bytes. */
  secretHash: Buffer;
  revoked: boolean;
  planId: string | null;
  rateLimitPerMinute: number | null;
}

/** Stores a new key's hash; throws on a duplicate prefix (astronomically unlikely). */
export async function insertApiKey(
  db: Db,
  key: { orgId: string; prefix: string; secretHash: string; label?: string | null; createdBy?: string | null },
) {
  return db
    .insertInto('api_keys')
    .values({
      org_id: key.orgId,
      prefix: key.prefix,
      secret_hash: key.secretHash,
      label: key.label ?? null,
      created_by: key.createdBy ?? null,
    })
    .returning(['id'])
    .executeTakeFirstOrThrow();
}

/** The prefixes of every key not revoked, in any org. */
export async function listActiveKeyPrefixes(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('api_keys').select('prefix').where('revoked_at', 'is', null).execute();
  return rows.map((row) => row.prefix);
}

/** Finds a key by its public prefix with its org's active plan; undefined when unknown. */
export async function findKeyByPrefix(db: Db, prefix: string): Promise<KeyLookup | undefined> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('orgs', 'orgs.id', 'api_keys.org_id')
    .leftJoin('plans', (join) => join.onRef('plans.id', '=', 'orgs.plan_id').on('plans.active', '=', true))
    .select([
      'api_keys.org_id',
      'orgs.live_org_id',
      'api_keys.secret_hash',
      'api_keys.revoked_at',
      'plans.id as plan_id',
      'plans.rate_limit_per_minute',
    ])
    .where('api_keys.prefix', '=', prefix)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    orgId: row.org_id,
    accountOrgId: row.live_org_id ?? row.org_id,
    livemode: row.live_org_id === null,
    secretHash: Buffer.from(row.secret_hash, 'hex'),
    revoked: row.revoked_at !== null,
    planId: row.plan_id,
    rateLimitPerMinute: row.rate_limit_per_minute,
  };
}

/** Lists the keys of the live org `liveOrgId` in both modes (each with `livemode`), newest first. */
export async function listKeys(db: Db, liveOrgId: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('orgs', 'orgs.id', 'api_keys.org_id')
    .select([
      'api_keys.id',
      'api_keys.prefix',
      'api_keys.label',
      'api_keys.created_by',
      'api_keys.created_at',
      'api_keys.last_used_at',
      'api_keys.revoked_at',
    ])
    .select(sql<boolean>`orgs.live_org_id IS NULL`.as('livemode'))
    .where((eb) => eb.or([eb('orgs.id', '=', liveOrgId), eb('orgs.live_org_id', '=', liveOrgId)]))
    .orderBy('api_keys.created_at', 'desc')
    .execute();
}

/**
 * Marks a key revoked (only among the live org `liveOrgId`'s keys, and only of `mode`, when given); returns
 * the live org it belongs to and its mode, or undefined when no unrevoked key has that prefix.
 */
export async function revokeKey(
  db: Db,
  prefix: string,
  at: Date,
  { liveOrgId, mode }: { liveOrgId?: string; mode?: Mode } = {},
): Promise<{ accountOrgId: string; livemode: boolean } | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .from('orgs')
    .whereRef('orgs.id', '=', 'api_keys.org_id')
    .where('api_keys.prefix', '=', prefix)
    .where('api_keys.revoked_at', 'is', null)
    .$if(liveOrgId !== undefined, (query) =>
      query.where((eb) => eb.or([eb('orgs.id', '=', liveOrgId!), eb('orgs.live_org_id', '=', liveOrgId!)])),
    )
    .$if(mode !== undefined, (query) => query.where('orgs.live_org_id', mode === 'live' ? 'is' : 'is not', null))
    .returning(['api_keys.org_id', 'orgs.live_org_id'])
    .executeTakeFirst();
  return row && { accountOrgId: row.live_org_id ?? row.org_id, livemode: row.live_org_id === null };
}

/** Records that a key was used at `at`, unless a use within the minute before is already recorded. */
export async function markKeyUsed(db: Db, prefix: string, at: Date): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('prefix', '=', prefix)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', new Date(at.getTime() - 60_000))]))
    .execute();
}
