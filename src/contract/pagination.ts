// The pagination object shared by every list operation, and where a requested page starts.
import type { components } from '../../generated/openapi.js';
import type { CursorSide, PageStart } from '../database/keyset.js';
import { invalidField, type DomainError } from '../errors.js';

export type { PageStart };

export type Pagination = components['schemas']['Pagination'];

export const DEFAULT_LIMIT = 50;

/** The page parameters every list accepts. */
export interface PageQuery {
  offset?: number;
  starting_after?: string;
  ending_before?: string;
}

/**
 * Where the requested page starts. The cursors exclude each other and a non-zero offset: such a
 * request is invalid_request naming the cursor given.
 */
export function pageStart(query: PageQuery): PageStart {
  const offset = query.offset ?? 0;
  const { starting_after: after, ending_before: before } = query;
  if (after !== undefined && before !== undefined) {
    throw invalidField('ending_before', 'cannot be combined with starting_after');
  }
  const cursor = after ?? before;
  if (cursor === undefined) return { offset };
  const param = after !== undefined ? 'starting_after' : 'ending_before';
  if (offset !== 0) throw invalidField(param, 'cannot be combined with a non-zero offset');
  return { cursor, side: after !== undefined ? 'after' : 'before' };
}

/** The invalid_request error for a cursor that names no item of the list. */
export function unknownCursor(side: CursorSide): DomainError {
  const param = side === 'after' ? 'starting_after' : 'ending_before';
  return invalidField(param, 'is not the id of an item of this list in your organisation');
}

/** Builds the pagination object for a page of `count` items out of `total`. */
export function paginate(limit: number, offset: number, count: number, total: number): Pagination {
  return { limit, offset, total, has_more: offset + count < total };
}

/**
 * The pagination object of a page that starts at `start`: by offset as `paginate` does; for a cursor
 * page, offset 0 and has_more from whether items were found beyond the page (`more`).
 */
export function paginateFrom(start: PageStart, limit: number, count: number, total: number, more: boolean) {
  return 'offset' in start ? paginate(limit, start.offset, count, total) : { limit, offset: 0, total, has_more: more };
}
