// Advisory locks that make DELETE /webhooks/{id} final. A sender holds the endpoint's "send" lock
// (shared, session level) from just before its last check of the endpoint until its attempt is
// recorded; DELETE first takes the endpoint's "delete" lock (an intent that new senders see and back
// off from), then the "send" lock exclusively, which waits for every sender in flight, then deletes.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';

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
  const { rows } = await sql<{ locked: boolean }>`SELECT pg_try_advisory_lock_shared(${sendKey(id)}) AS locked`.execute(conn);
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

/** A cheap round trip proving the session (and so its locks) is alive; throws otherwise. */
export async function pingSession(conn: Db): Promise<void> {
  await sql`SELECT 1`.execute(conn);
}

/**
 * Inside a deleting transaction: announces the deletion, then waits until no sender is in flight for
 * the endpoint (bounded by `timeoutMs`, after which it throws). Both locks last until the transaction ends.
 */
export async function lockForDeletion(trx: Db, id: string, timeoutMs: number): Promise<void> {
  await sql`SELECT set_config('lock_timeout', ${`${timeoutMs}ms`}, true)`.execute(trx);
  await sql`SELECT pg_advisory_xact_lock(${deleteKey(id)})`.execute(trx);
  await sql`SELECT pg_advisory_xact_lock(${sendKey(id)})`.execute(trx);
}
