// Pages of the lists read newest first, with their totals. A page starts after skipping `offset` rows,
// or beside a cursor row (keyset pagination): compared on the list's sort columns, so rows created
// meanwhile neither shift nor repeat the page. Each list gives only what differs: its rows (table, the
// org's condition, its filters, the columns read), its sort and where its total comes from.
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../db/schema.js';

/** Which side of the cursor row a page lies on, in the list's order: after it (older) or before it (newer). */
export type CursorSide = 'after' | 'before';

/** Where a page starts: after skipping `offset` items, or next to the cursor item, on `side` of it. */
export type PageStart = { offset: number } | { cursor: string; side: CursorSide };

/** A page of a list with the list's total; `more` tells whether a cursor page has more beyond it. */
export interface PageWithTotal<Row> {
  rows: Row[];
  total: number;
  more: boolean;
}

/**
 * A list read newest first: `rows` selects its rows (filtered, their columns chosen), sorted descending
 * on `columns` of `table` (the last one unique); a cursor is the id of a row of `table`.
 */
export interface KeysetList<DB, TB extends keyof DB, Row, T extends TB & string> {
  rows: SelectQueryBuilder<DB, TB, Row>;
  table: T;
  columns: readonly (keyof DB[T] & string)[];
}

/**
 * One page of `list` from `start` and the list's total (`total`, started with the page: two statements
 * in parallel). A cursor page reads `limit + 1` rows to learn whether more lie beyond it; an unknown
 * cursor matches no row.
 */
export async function readPageAndTotal<DB, TB extends keyof DB, Row, T extends TB & string>(
  list: KeysetList<DB, TB, Row, T>,
  total: () => Promise<number>,
  page: { limit: number; start: PageStart },
): Promise<PageWithTotal<Row>> {
  const { limit, start } = page;
  if ('offset' in start) {
    const [rows, counted] = await Promise.all([pageQuery(list, { limit, offset: start.offset }).execute(), total()]);
    return { rows, total: counted, more: false };
  }
  const [nearestFirst, counted] = await Promise.all([
    pageQuery(list, { ...start, limit: limit + 1 }).execute(),
    total(),
  ]);
  return { ...cursorPage(nearestFirst, limit, start.side), total: counted };
}

/** How many rows `matching` (a list's rows before columns are chosen) selects: a total for readPageAndTotal. */
export async function countRows<TB extends keyof Database>(
  matching: SelectQueryBuilder<Database, TB, Record<never, never>>,
): Promise<number> {
  const counted = await matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
  return Number(counted.total);
}

/** Which rows a page reads: `limit` after skipping `offset`, or the `limit` nearest the cursor row on `side`. */
type PageBounds = { limit: number; offset: number } | { limit: number; cursor: unknown; side: CursorSide };

/** The query of a page of `list`: in the list's order, or beside a cursor nearest the cursor first. */
function pageQuery<DB, TB extends keyof DB, Row, T extends TB & string>(
  list: KeysetList<DB, TB, Row, T>,
  bounds: PageBounds,
): SelectQueryBuilder<DB, TB, Row> {
  const side = 'side' in bounds ? bounds.side : undefined;
  const order = readOrder(side);
  let query = list.rows;
  if ('side' in bounds) query = query.where(beyondCursor(list.table, list.columns, bounds.side, bounds.cursor));
  for (const column of list.columns) query = query.orderBy(sql.ref(column), order);
  query = query.limit(bounds.limit);
  return 'offset' in bounds ? query.offset(bounds.offset) : query;
}

/**
 * The condition "this row lies on `side` of the cursor row" for a list in descending order of
 * `columns`, the cursor row being the row of `table` whose id is `cursor`. No row passes when there is
 * no such row.
 */
export function beyondCursor(table: string, columns: readonly string[], side: CursorSide, cursor: unknown) {
  const own = sql.join(columns.map((column) => sql.ref(column)));
  const its = sql.join(columns.map((column) => sql.ref(`cursor_row.${column}`)));
  const comparison = sql.raw(side === 'after' ? '<' : '>');
  return sql<boolean>`(${own}) ${comparison} (SELECT ${its} FROM ${sql.table(table)} AS cursor_row WHERE cursor_row.id = ${cursor})`;
}

/** The direction a page is read in: the list's (descending), or from its cursor outwards, nearest first. */
function readOrder(side: CursorSide | undefined): 'asc' | 'desc' {
  return side === undefined ? 'desc' : cursorReadOrder(side);
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
