// SQL for the failed sign-ins the throttle counts (dashboard_sign_in_failures).
import type { Db } from '../database/connect.js';

/** Records failed sign-ins against each subject. */
export async function insertFailures(db: Db, subjects: string[], at: Date): Promise<string[]> {
  const rows = await db
    .insertInto('dashboard_sign_in_failures')
    .values(subjects.map((subject) => ({ subject, at })))
    .returning('id')
    .execute();
  return rows.map((row) => String(row.id));
}

/** Removes the failures `insertFailures` wrote under `ids`. */
export async function deleteFailures(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('dashboard_sign_in_failures').where('id', 'in', ids).execute();
}

/** How many failures `subject` has had since `since`, counting at most `cap`. */
export async function countFailures(db: Db, subject: string, since: Date, cap: number): Promise<number> {
  const rows = await db
    .selectFrom('dashboard_sign_in_failures')
    .select('id')
    .where('subject', '=', subject)
    .where('at', '>', since)
    .limit(cap)
    .execute();
  return rows.length;
}

/** The id of `subject`'s first failure since `since` (ids grow with insertion), or undefined when none. */
export async function firstFailureId(db: Db, subject: string, since: Date): Promise<string | undefined> {
  const row = await db
    .selectFrom('dashboard_sign_in_failures')
    .select('id')
    .where('subject', '=', subject)
    .where('at', '>', since)
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  // int8 columns are read as numbers (see database/connect.ts); ids are compared in insertFailures' form.
  return row === undefined ? undefined : String(row.id);
}

/** Removes the failures from before `since`; returns how many went. */
export async function deleteOldFailures(db: Db, since: Date): Promise<bigint> {
  const failures = await db.deleteFrom('dashboard_sign_in_failures').where('at', '<=', since).executeTakeFirst();
  return failures.numDeletedRows;
}
