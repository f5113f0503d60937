// Advisory locks that make DELETE /webhooks/{id} final. A sender holds the endpoint's "send" lock
// (shared, session level) from just before its last check of the endpoint until its attempt has
// ended (answered, failed or aborted). DELETE first takes the endpoint's "delete" lock (an intent
// that new senders see and back off from, and that senders in flight look for), then asks senders in
// flight to abort, then takes the "send" lock exclusively, which waits until every one has stopped,
// then deletes. So when DELETE commits, no attempt to the endpoint is running and none can start.
import { sql } from 'kysely';
import type { Db } from '../../database/connect.js';
import { DELETION_CHANNEL } from './sends-in-flight.js';

const sendKey = (id: string) => sql`hashtextextended(${`webhook-send:${id}`}, 0)`;
const deleteKey = (id: string) => sql`hashtextextended(${`webhook-delete:${id}`}, 0)`;

/** What a sender needs to know about an endpoint, read while holding its send lock. */
export interface SendTargetRow {
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  active: boolean;
}

/** Takes a shared send lock on `conn`'s session without waiting; false when a deletion holds it. */
export async function tryLockForSending(conn: Db, id: string): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock_shared(${sendKey(id)}) AS locked`.execute(
    conn,
  );
  return rows[0]?.locked === true;
}

/**
 * Reads the endpoint for sending, or undefined when it is gone or a deletion of it has begun. Call only
 * while holding its send lock, so a deletion that has not begun yet will wait for this sender.
 */
export async function readSendTarget(conn: Db, id: string): Promise<SendTargetRow | undefined> {
  const { rows } = await sql<SendTargetRow & { deletion_pending: boolean; found: boolean }>`
    SELECT NOT pg_try_advisory_xact_lock_shared(${deleteKey(id)}) AS deletion_pending,
           w.id IS NOT NULL AS found, w.url, w.secret, w.previous_secret, w.previous_secret_expires_at, w.active
    FROM (SELECT 1) AS one LEFT JOIN webhooks w ON w.id = ${id}::uuid`.execute(conn);
  const row = rows[0];
  if (!row || row.deletion_pending || !row.found) return undefined;
  return row;
}

/** Releases one shared send lock held by `conn`'s session. */
export async function unlockForSending(conn: Db, id: string): Promise<void> {
  await sql`SELECT pg_advisory_unlock_shared(${sendKey(id)})`.execute(conn);
}

/** Releases every advisory lock held by `conn`'s session. */
export async function unlockAll(conn: Db): Promise<void> {
  await sql`SELECT pg_advisory_unlock_all()`.execute(conn);
}

/**
 * Of the endpoints `ids`, those a deletion has begun for (it holds their delete lock). One round trip
 * on `conn`'s session that also proves the session alive; throws when it is not.
 */
export async function deletionsPending(conn: Db, ids: string[]): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM unnest(${ids}::text[]) AS id
    WHERE NOT pg_try_advisory_xact_lock_shared(hashtextextended('webhook-delete:' || id, 0))`.execute(conn);
  return rows.map((row) => row.id);
}

/**
 * Inside a deleting transaction: announces the deletion (senders that have not checked the endpoint
 * yet back off; senders in flight find it within a second) and bounds this transaction's lock waits
 * by `lockTimeoutMs` and its statements by `statementTimeoutMs`. Waits while another deletion of the
 * same endpoint runs. The lock lasts until the transaction ends.
 */
export async function beginDeletion(
  trx: Db,
  id: string,
  limits: { lockTimeoutMs: number; statementTimeoutMs: number },
): Promise<void> {
  await sql`SELECT set_config('lock_timeout', ${`${limits.lockTimeoutMs}ms`}, true),
                   set_config('statement_timeout', ${`${limits.statementTimeoutMs}ms`}, true)`.execute(trx);
  await sql`SELECT pg_advisory_xact_lock(${deleteKey(id)})`.execute(trx);
}

/**
 * Asks every process to abort its attempts to the endpoint now. Sent outside the deleting transaction
 * (a notification made inside it would only be delivered at its commit, after the wait it is meant to end).
 */
export async function notifyDeletion(db: Db, id: string): Promise<void> {
  await sql`SELECT pg_notify(${DELETION_CHANNEL}, ${id})`.execute(db);
}

/**
 * Inside a deleting transaction, after beginDeletion: waits until no sender is in flight for the
 * endpoint (bounded by the lock timeout, after which it throws). The lock lasts until the transaction ends.
 */
export async function waitForSenders(trx: Db, id: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${sendKey(id)})`.execute(trx);
}
