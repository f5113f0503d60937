// SQL for the do-not-call list: the upsert keyed by (org, number), removal, the dial-time lookup and the
// newest-first lists (the API's with a total and cursors, the dashboard's without a count).
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import type { SuppressionsTable } from '../../db/schema.js';
import { countRows, readPageAndTotal, type PageStart } from '../database/keyset.js';

/** What an entry is added or changed with. */
export interface SuppressionFields {
  phone: string;
  reason: SuppressionsTable['reason'];
  note: string | null;
  createdBy: SuppressionsTable['created_by'];
}

/**
 * Adds the org's entry for the number, or replaces the reason and note of the one it has (its id,
 * created_at and created_by stay); returns the row and whether it was inserted.
 */
export async function upsertSuppressionRow(db: Db, orgId: string, fields: SuppressionFields) {
  return db
    .insertInto('suppressions')
    .values({
      org_id: orgId,
      phone_e164: fields.phone,
      reason: fields.reason,
      note: fields.note,
      created_by: fields.createdBy,
    })
    .onConflict((conflict) =>
      conflict.columns(['org_id', 'phone_e164']).doUpdateSet((eb) => ({
        reason: eb.ref('excluded.reason'),
        note: eb.ref('excluded.note'),
        updated_at: sql`clock_timestamp()`,
      })),
    )
    .returningAll()
    .returning(sql<boolean>`(xmax = 0)`.as('inserted'))
    .executeTakeFirstOrThrow();
}

/** Removes the org's entry for the number; returns it, or undefined when the org has none. */
export async function deleteSuppressionRow(db: Db, orgId: string, phone: string) {
  return db
    .deleteFrom('suppressions')
    .where('org_id', '=', orgId)
    .where('phone_e164', '=', phone)
    .returningAll()
    .executeTakeFirst();
}

/** The org's entry for the number, or undefined (the primary key's lookup: what a placement reads). */
export async function findSuppressionRow(db: Db, orgId: string, phone: string) {
  return db
    .selectFrom('suppressions')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('phone_e164', '=', phone)
    .executeTakeFirst();
}

/** Which of `phones` are on the org's list (one statement for a batch of numbers). */
export async function suppressedAmong(db: Db, orgId: string, phones: string[]): Promise<Set<string>> {
  if (phones.length === 0) return new Set();
  const rows = await db
    .selectFrom('suppressions')
    .select('phone_e164')
    .where('org_id', '=', orgId)
    .where('phone_e164', 'in', phones)
    .execute();
  return new Set(rows.map((row) => row.phone_e164));
}

/** Whether the org has an entry with this id (a cursor must name one). */
export async function hasSuppressionId(db: Db, orgId: string, id: string): Promise<boolean> {
  const found = await db
    .selectFrom('suppressions')
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
  return found !== undefined;
}

/** Up to `limit` + 1 of the org's entries from `offset`, newest first (ties by id), without counting the list. */
export function browseSuppressionRows(db: Db, orgId: string, page: { limit: number; offset: number }) {
  return db
    .selectFrom('suppressions')
    .selectAll()
    .where('org_id', '=', orgId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit + 1)
    .offset(page.offset)
    .execute();
}

/**
 * One page of the org's entries (those with `reason`, or of `phone`, when given), newest first (ties by
 * id), with the list's total; `more` tells whether a cursor page has more beyond it (no entry passes an
 * unknown cursor).
 */
export async function listSuppressionRows(
  db: Db,
  orgId: string,
  page: { limit: number; reason?: SuppressionsTable['reason']; phone?: string } & PageStart,
) {
  let matching = db.selectFrom('suppressions').where('org_id', '=', orgId);
  if (page.reason) matching = matching.where('reason', '=', page.reason);
  if (page.phone) matching = matching.where('phone_e164', '=', page.phone);
  return readPageAndTotal(
    { rows: matching.selectAll(), table: 'suppressions', columns: ['created_at', 'id'] },
    () => countRows(matching),
    { limit: page.limit, start: page },
  );
}
