// SQL for the one-time forms' nonces used in each session (dashboard_form_uses).
import type { Db } from '../database/connect.js';

/** PostgreSQL's SQLSTATE for a row whose referenced row does not exist. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Records a one-time form's nonce as used in the session: `claimed`, or `used` when it already was, or
 * `no_session` when the session ended meanwhile.
 */
export async function claimFormUse(
  db: Db,
  sessionIdHash: string,
  nonce: string,
  now: Date,
): Promise<'claimed' | 'used' | 'no_session'> {
  try {
    const row = await db
      .insertInto('dashboard_form_uses')
      .values({ session_id_hash: sessionIdHash, nonce, used_at: now })
      .onConflict((conflict) => conflict.columns(['session_id_hash', 'nonce']).doNothing())
      .returning('nonce')
      .executeTakeFirst();
    return row ? 'claimed' : 'used';
  } catch (error) {
    if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) return 'no_session';
    throw error;
  }
}

/** Forgets a nonce's use, so the form it came with may be sent again (its change was not made). */
export async function releaseFormUse(db: Db, sessionIdHash: string, nonce: string): Promise<void> {
  await db
    .deleteFrom('dashboard_form_uses')
    .where('session_id_hash', '=', sessionIdHash)
    .where('nonce', '=', nonce)
    .execute();
}
