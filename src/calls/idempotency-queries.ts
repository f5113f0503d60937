// SQL for the Idempotency-Key records of POST /calls, scoped per org.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database/connect.js';
import type { CallIdempotencyKeysTable } from '../../db/schema.js';

/**
 * Takes (org, key) for the current transaction: inserts the record, or takes over one created before
 * `expiredBefore`. Returns false when a live record exists. While another open transaction holds the
 * key, this waits for it to commit or roll back.
 */
export async function claimIdempotencyKey(
  db: Db,
  claim: { orgId: string; key: string; requestHash: string; now: Date; expiredBefore: Date },
): Promise<boolean> {
  const row = await db
    .insertInto('call_idempotency_keys')
    .values({ org_id: claim.orgId, key: claim.key, request_hash: claim.requestHash, created_at: claim.now })
    .onConflict((oc) =>
      oc
        .columns(['org_id', 'key'])
        .doUpdateSet({ request_hash: claim.requestHash, created_at: claim.now, call_id: null, response: null })
        .where('call_idempotency_keys.created_at', '<', claim.expiredBefore),
    )
    .returning('key')
    .executeTakeFirst();
  return row !== undefined;
}

/** The committed record for (org, key), or undefined. */
export async function findIdempotencyRecord(
  db: Db,
  orgId: string,
  key: string,
): Promise<Selectable<CallIdempotencyKeysTable> | undefined> {
  return db
    .selectFrom('call_idempotency_keys')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Stores the response a claimed key replays. */
export async function saveIdempotentResponse(
  db: Db,
  record: {
    orgId: string;
    key: string;
    callId: string;
    response: NonNullable<Selectable<CallIdempotencyKeysTable>['response']>;
  },
): Promise<void> {
  await db
    .updateTable('call_idempotency_keys')
    .set({ call_id: record.callId, response: JSON.stringify(record.response) })
    .where('org_id', '=', record.orgId)
    .where('key', '=', record.key)
    .execute();
}

/** Deletes the record of (org, key). */
export async function deleteIdempotencyRecord(db: Db, orgId: string, key: string): Promise<void> {
  await db.deleteFrom('call_idempotency_keys').where('org_id', '=', orgId).where('key', '=', key).execute();
}

/** Deletes up to `limit` Idempotency-Key records created before `before`; returns how many. */
export async function deleteExpiredIdempotencyKeys(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM call_idempotency_keys WHERE (org_id, key) IN (
      SELECT org_id, key FROM call_idempotency_keys WHERE created_at < ${before} LIMIT ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
