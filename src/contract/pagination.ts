// The pagination object shared by every list operation.
import type { components } from '../../generated/openapi.js';

export type Pagination = components['schemas']['Pagination'];

export const DEFAULT_LIMIT = 50;

/** Builds the pagination object for a page of `count` items out of `total`. */
export function paginate(limit: number, offset: number, count: number, total: number): Pagination {
  return { limit, offset, total, has_more: offset + count < total };
}
