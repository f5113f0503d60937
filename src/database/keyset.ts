// Pages of the lists read newest first, with their totals. A page starts after skipping `offset` rows,
// or beside a cursor row (keyset pagination): compared on the list's sort columns, so rows created
// meanwhile neither shift nor repeat the page. Each list gives only what differs: its rows (table, the
// org's condition, its filters, the columns read), its sort and where its total comes from.
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Db } from './connect.js';
import { prepareQuery, type Arg } from './prepared-query.js';

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

/** The arguments of a page-with-total statement besides the list's own (each statement uses those of its kind of page). */
type BoundArgs = { limit: number; offset: number; cursor: string };

/**
 * The reader of a list whose page and total come from one statement: the total's one-row query
 * left-joined to the page, so both are read from one snapshot in one round trip. `build` makes the
 * list and its total query (from a count or from counters) with the list's own arguments; the three
 * statements (offset pages, and each side of a cursor) are prepared once (see prepared-query.ts).
 */
export function preparedPageWithTotal<
  Args extends Record<string, unknown>,
  TB extends keyof Database,
  Row extends { id: string } & Record<string, unknown>,
  T extends TB & string,
>(
  build: (
    db: Db,
    arg: Arg<Args>,
  ) => {
    list: KeysetList<Database, TB, Row, T>;
    total: SelectQueryBuilder<Database, keyof Database, { total: number }>;
  },
) {
  const statement = (side?: CursorSide) =>
    prepareQuery((db, arg: Arg<Args & BoundArgs>) => {
      const { list, total } = build(db, arg);
      const bounds = side
        ? { side, cursor: arg('cursor'), limit: arg('limit') }
        : { limit: arg('limit'), offset: arg('offset') };
      const order = readOrder(side);
      let query = db
        .with('page', () => pageQuery(list, bounds))
        .with('counted', () => total)
        .selectFrom('counted')
        .leftJoin('page', (join) => join.onTrue())
        .select('counted.total')
        .selectAll('page');
      for (const column of list.columns) query = query.orderBy(sql.ref(`page.${column}`), order);
      return query;
    });
  const statements = { offset: statement(), after: statement('after'), before: statement('before') };
  return async (db: Db, args: Args, page: { limit: number; start: PageStart }): Promise<PageWithTotal<Row>> => {
    const { limit, start } = page;
    if ('offset' in start) {
      const found = await statements.offset.execute(db, { ...args, limit, offset: start.offset, cursor: '' });
      return { ...splitPageAndTotal<Row>(found), more: false };
    }
    const found = await statements[start.side].execute(db, {
      ...args,
      limit: limit + 1,
      offset: 0,
      cursor: start.cursor,
    });
    const { rows, total } = splitPageAndTotal<Row>(found);
    return { ...cursorPage(rows, limit, start.side), total };
  };
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
function beyondCursor(table: string, columns: readonly string[], side: CursorSide, cursor: unknown) {
  const own = sql.join(columns.map((column) => sql.ref(column)));
  const its = sql.join(columns.map((column) => sql.ref(`cursor_row.${column}`)));
  const comparison = sql.raw(side === 'after' ? '<' : '>');
  return sql<boolean>`(${own}) ${comparison} (SELECT ${its} FROM ${sql.table(table)} AS cursor_row WHERE cursor_row.id = ${cursor})`;
}

/** The direction a page is read in: the list's (descending), or from its cursor outwards, nearest first. */
function readOrder(side: CursorSide | undefined): 'asc' | 'desc' {
  return side === 'before' ? 'asc' : 'desc';
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

/**
 * The page's rows and the total from the rows of a page-with-total statement. The total's row always
 * comes back, with every page column null (`id` among them) when the page is empty. Throws when there
 * is no row.
 */
function splitPageAndTotal<Row>(found: ReadonlyArray<{ total: unknown; id?: unknown }>): {
  rows: Row[];
  total: number;
} {
  const first = found[0];
  if (!first) throw new Error('a page-with-total statement returned no row');
  const rows = first.id === null ? [] : found.map(({ total: _total, ...row }) => row as Row);
  return { rows, total: Number(first.total) };
}
