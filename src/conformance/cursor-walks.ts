// Cursor paging (`starting_after`, `ending_before`) checked against a list's offset order: walks
// towards each end of the list at several page sizes, where every page must hold exactly the items
// the offset order puts next to its cursor (none skipped, none repeated) with `has_more` right, and
// an id that names no item is refused as the spec says.
import { randomBytes, randomUUID } from 'node:crypto';
import { itemId, pageOf, type Finding, type Page } from './page.js';
import type { Session } from './session.js';
import type { Operation } from './spec/operations.js';

/** The page sizes each walk is made with, and how many items next to each end of the list it covers. */
const PAGE_SIZES = [1, 2, 3];
const SPAN = 4;

type Cursor = 'starting_after' | 'ending_before';

/** Whether the operation declares both cursors (every list of the spec does). */
export const pagesByCursor = (operation: Operation) =>
  ['starting_after', 'ending_before'].every((name) =>
    operation.parameters.some((parameter) => parameter.in === 'query' && parameter.name === name),
  );

/** What one cursor page asked for, and what the offset order says it must hold. */
interface Expected {
  cursor: Cursor;
  /** The cursor item's id. */
  at: string;
  limit: number;
  /** The ids the offset order puts on this page, in the list's order. */
  ids: string[];
  /** Where the first of them is in the offset order. */
  index: number;
  more: boolean;
  total: number;
}

/** What is wrong with a cursor page, given what it must hold and the items earlier pages of its walk held. */
function cursorPageProblems(page: Page, expected: Expected, walked: Set<string>): string[] {
  const asked = `${expected.cursor}=${expected.at} limit=${expected.limit}`;
  const { pagination } = page;
  const problems: string[] = [];
  if (pagination.limit !== expected.limit) problems.push(`${asked}: pagination.limit is ${String(pagination.limit)}`);
  if (pagination.offset !== 0)
    problems.push(`${asked}: pagination.offset must be 0 with a cursor, is ${String(pagination.offset)}`);
  if (pagination.total !== expected.total)
    problems.push(`${asked}: pagination.total is ${String(pagination.total)}, the offset pages say ${expected.total}`);
  if (pagination.has_more !== expected.more)
    problems.push(
      `${asked}: has_more is ${String(pagination.has_more)}, but ${expected.more ? 'items remain' : 'no item remains'} beyond the page`,
    );
  const got = page.data.map((item) => String(itemId(item)));
  for (const id of got) {
    if (id === expected.at) problems.push(`${asked}: repeats the cursor item ${id}`);
    else if (walked.has(id)) problems.push(`${asked}: repeats ${id}, already on an earlier page of the walk`);
  }
  expected.ids.forEach((id, offset) => {
    if (!got.includes(id)) problems.push(`${asked}: skips ${id}, item ${expected.index + offset} of the offset order`);
  });
  if (problems.length === 0 && got.join() !== expected.ids.join())
    problems.push(
      `${asked}: holds ${got.join(', ') || 'nothing'}, the offset order has ${expected.ids.join(', ') || 'nothing'}`,
    );
  return problems;
}

/**
 * Walks from the item at `from` towards one end of the list (`starting_after`: to the end or `SPAN`
 * items on; `ending_before`: to the head), `limit` items a page, each next cursor taken from the page
 * as a client would. Returns the findings, or undefined when an answer was no page.
 */
async function walkFrom(
  session: Session,
  operation: Operation,
  path: Record<string, string>,
  ids: readonly string[],
  total: number,
  cursor: Cursor,
  from: number,
  limit: number,
): Promise<Finding[] | undefined> {
  const forward = cursor === 'starting_after';
  const last = ids.length === total ? ids.length - 1 : Math.min(ids.length - 1, from + SPAN);
  const findings: Finding[] = [];
  const walked = new Set<string>();
  for (let at = from; forward ? at < last : at > 0;) {
    const index = forward ? at + 1 : Math.max(0, at - limit);
    const expected: Expected = {
      cursor,
      at: ids[at]!,
      limit,
      ids: forward ? ids.slice(at + 1, at + 1 + limit) : ids.slice(index, at),
      index,
      more: forward ? at + limit < total - 1 : at - limit > 0,
      total,
    };
    const label = `paging: ${cursor} walk, limit=${limit}`;
    const exchange = await session.call(
      operation,
      { path, query: { limit, [cursor]: expected.at }, headers: {} },
      { kind: 'success' },
      'scenario',
      label,
    );
    const page = pageOf(exchange);
    if (!page) return undefined;
    findings.push({ label, exchange, problems: cursorPageProblems(page, expected, walked) });
    const got = page.data.map((item) => String(itemId(item)));
    for (const id of got) walked.add(id);
    // The next cursor is the page's far end, as a client takes it; a page that leads nowhere ends the walk.
    const next = ids.indexOf((forward ? got.at(-1) : got[0]) ?? '');
    if (next < 0 || (forward ? next <= at : next >= at)) break;
    at = next;
  }
  return findings;
}

/**
 * Every cursor walk of one list whose one-page read gave the offset order `reference`: from near the
 * end to the end with `starting_after`, from near the head to the head with `ending_before`, at each
 * page size, then a page beyond each end. Undefined when an answer was no page.
 */
export async function cursorWalks(
  session: Session,
  operation: Operation,
  path: Record<string, string>,
  reference: Page,
  total: number,
): Promise<Finding[] | undefined> {
  const ids = reference.data.map((item) => String(itemId(item)));
  if (!pagesByCursor(operation) || ids.length === 0) return [];
  const findings: Finding[] = [];
  // A list longer than the one-page read is walked from its head, where the offset order is known.
  const tail = ids.length === total ? Math.max(0, ids.length - 1 - SPAN) : 0;
  const head = Math.min(ids.length - 1, SPAN);
  for (const limit of PAGE_SIZES) {
    for (const [cursor, from] of [
      ['starting_after', tail],
      ['ending_before', head],
    ] as const) {
      const walked = await walkFrom(session, operation, path, ids, total, cursor, from, limit);
      if (!walked) return undefined;
      findings.push(...walked);
    }
  }
  const ends: Array<[Cursor, number]> = [['ending_before', 0]];
  if (ids.length === total) ends.push(['starting_after', ids.length - 1]);
  for (const [cursor, at] of ends) {
    const label = `paging: ${cursor} the ${at === 0 ? 'first' : 'last'} item`;
    const exchange = await session.call(
      operation,
      { path, query: { limit: 1, [cursor]: ids[at]! }, headers: {} },
      { kind: 'success' },
      'scenario',
      label,
    );
    const page = pageOf(exchange);
    if (!page) return undefined;
    const expected = { cursor, at: ids[at]!, limit: 1, ids: [], index: at, more: false, total };
    findings.push({ label, exchange, problems: cursorPageProblems(page, expected, new Set()) });
  }
  return findings;
}

/** An id shaped like `sample` (a UUID, or a prefix and random characters) that names no item. */
function unknownId(sample: string): string {
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(sample)) return randomUUID();
  const prefix = sample.slice(0, sample.lastIndexOf('_') + 1);
  return `${prefix}${randomBytes(sample.length)
    .toString('hex')
    .slice(0, sample.length - prefix.length)}`;
}

/** A cursor that names no item of the list is `400 invalid_request` naming the cursor, each way. */
export async function unknownCursors(
  session: Session,
  operation: Operation,
  path: Record<string, string>,
  sample: string,
): Promise<void> {
  if (!pagesByCursor(operation)) return;
  for (const cursor of ['starting_after', 'ending_before'] as const) {
    await session.call(
      operation,
      { path, query: { [cursor]: unknownId(sample) }, headers: {} },
      { kind: 'error', status: 400, code: 'invalid_request', param: cursor },
      'scenario',
      `paging: ${cursor} names no item`,
    );
  }
}
