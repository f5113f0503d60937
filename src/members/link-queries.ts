// SQL for one-time invite and reset links (dashboard_links), stored by their token's hash.
import type { Db } from '../database/connect.js';

/** Stores a one-time link by its token's hash. */
export async function insertLink(
  db: Db,
  link: { tokenHash: string; userId: string; purpose: 'invite' | 'reset'; expiresAt: Date },
): Promise<void> {
  await db
    .insertInto('dashboard_links')
    .values({ token_hash: link.tokenHash, user_id: link.userId, purpose: link.purpose, expires_at: link.expiresAt })
    .execute();
}

/** The unused, unexpired link with this token hash, with its user; undefined otherwise. */
export async function findUsableLink(db: Db, tokenHash: string, now: Date) {
  return db
    .selectFrom('dashboard_links')
    .innerJoin('dashboard_users', 'dashboard_users.id', 'dashboard_links.user_id')
    .select([
      'dashboard_links.token_hash',
      'dashboard_links.purpose',
      'dashboard_users.id as user_id',
      'dashboard_users.email',
    ])
    .where('dashboard_links.token_hash', '=', tokenHash)
    .where('dashboard_links.used_at', 'is', null)
    .where('dashboard_links.expires_at', '>', now)
    .executeTakeFirst();
}

/** Marks the link used, if it still is usable; false when another request used it first. */
export async function useLink(db: Db, tokenHash: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Voids every unused link of a user (a new reset replaces older links). */
export async function voidLinks(db: Db, userId: string, now: Date): Promise<void> {
  await db
    .updateTable('dashboard_links')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}

/** Removes the links past their end; returns how many went. */
export async function deleteExpiredLinks(db: Db, now: Date): Promise<bigint> {
  const links = await db.deleteFrom('dashboard_links').where('expires_at', '<=', now).executeTakeFirst();
  return links.numDeletedRows;
}
