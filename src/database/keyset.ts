// Cursor pages (keyset pagination) of lists read newest first: the rows beyond a cursor row, compared
// on the list's sort columns, so rows created meanwhile neither shift nor repeat the page.
import { sql } from 'kysely';

/** Which side of the cursor row a page lies on, in the list's order: after it (older) or before it (newer). */
export type CursorSide = 'after' | 'before';

/**
 * The condition "this row lies on `side` of the cursor row" for a list in descending order of
 * `columns` (the last one unique), the cursor row being the row of `table` whose id is `cursor`. No row
 * passes when there is no such row. Read the page in the list's order for 'after' and against it for
 * 'before' (then turn it round), `limit + 1` rows to learn whether more lie beyond (cursorPage).
 */
export function beyondCursor(table: string, columns: readonly string[], side: CursorSide, cursor: unknown) {
  const own = sql.join(columns.map((column) => sql.ref(column)));
  const its = sql.join(columns.map((column) => sql.ref(`cursor_row.${column}`)));
  const comparison = sql.raw(side === 'after' ? '<' : '>');
  return sql<boolean>`(${own}) ${comparison} (SELECT ${its} FROM ${sql.table(table)} AS cursor_row WHERE cursor_row.id = ${cursor})`;
}

/** The sort direction that reads a page on `side` of its cursor nearest first, for a list read descending. */
export function cursorReadOrder(side: CursorSide): 'asc' | 'desc' {
  return side === 'after' ? 'desc' : 'asc';
}

/**
 * A cursor page from the `limit + 1` rows nearest the cursor, given nearest first: at most `limit` rows
 * in the list's order, and whether more lie beyond them.
 */
export function cursorPage<Row>(nearestFirst: Row[], limit: number, side: CursorSide): { rows: Row[]; more: boolean } {
  const rows = nearestFirst.slice(0, limit);
  if (side === 'before') rows.reverse();
  return { rows, more: nearestFirst.length > limit };
}
