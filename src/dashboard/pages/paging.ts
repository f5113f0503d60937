// Page numbers and the pager of the calls and contacts lists.
import type Koa from 'koa';
import { html, type SafeHtml } from '../html.js';
import { PAGE_SIZE } from '../policy.js';
import { count } from '../format.js';
import { DomainError } from '../../errors.js';

/** The furthest page a list goes to (deep offsets cost in proportion; filters narrow a list instead). */
const MAX_PAGE = 200;

/**
 * The requested page (1 when absent or not a whole number from 1) with its offset; throws
 * invalid_request for a page past the furthest a list goes to.
 */
export function pageOf(ctx: Koa.Context): { page: number; limit: number; offset: number } {
  const raw = typeof ctx.query.page === 'string' ? Number(ctx.query.page) : 1;
  if (Number.isInteger(raw) && raw > MAX_PAGE) {
    throw new DomainError(
      'invalid_request',
      `Lists go to page ${MAX_PAGE} at most; choose a filter to find what is further on.`,
    );
  }
  const page = Number.isInteger(raw) && raw >= 1 ? raw : 1;
  return { page, limit: PAGE_SIZE, offset: (page - 1) * PAGE_SIZE };
}

/**
 * Previous and next links keeping the list's filters, and where the page is: in the whole when the
 * list's `total` is known, otherwise only whether `more` follow and how many rows this page `shown`.
 */
export function pager(
  path: string,
  filters: Record<string, string | undefined>,
  page: number,
  extent: { total: number } | { more: boolean; shown: number },
): SafeHtml {
  const pages =
    'total' in extent
      ? Math.min(MAX_PAGE, Math.max(1, Math.ceil(extent.total / PAGE_SIZE)))
      : Math.min(MAX_PAGE, extent.more ? page + 1 : page);
  const href = (to: number) => {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(filters)) if (value) query.set(name, value);
    query.set('page', String(to));
    return `${path}?${query.toString()}`;
  };
  // A page past the last (an old link, a list that shrank) says so and leads back: to the last page
  // when the total is known, else to the first.
  if (!('total' in extent) && extent.shown === 0 && page > 1) {
    return html`<nav class="pager" aria-label="Pages">
      <a href="${href(1)}">First page</a>
      <span>Page ${page} is past the end of the list</span>
    </nav>`;
  }
  // A list longer than its furthest page says where it stops, and how to reach the rest.
  const cut = 'total' in extent ? extent.total > MAX_PAGE * PAGE_SIZE : extent.more && page >= MAX_PAGE;
  const stops = `the list stops at page ${MAX_PAGE}: choose a filter to find the rest`;
  const where =
    'total' in extent
      ? page > pages
        ? `Page ${page} is past the last page, ${pages} (${count(extent.total)} in all)`
        : `Page ${page} of ${pages} (${count(extent.total)} in all${cut ? `; ${stops}` : ''})`
      : `Page ${page}${cut ? ` (${stops})` : ''}`;
  return html`<nav class="pager" aria-label="Pages">
    ${page > 1 ? html`<a href="${href(Math.min(page - 1, pages))}" rel="prev">Previous page</a>` : ''}
    <span>${where}</span>
    ${page < pages ? html`<a href="${href(page + 1)}" rel="next">Next page</a>` : ''}
  </nav>`;
}

/** A filter form of one select (with "All") submitted by GET, keeping the list's other filters (`kept`). */
export function selectFilter(
  path: string,
  name: string,
  label: string,
  options: readonly string[],
  current: string | undefined,
  kept: Record<string, string | undefined> = {},
): SafeHtml {
  const hidden = Object.entries(kept).flatMap(([field, value]) =>
    value ? [html`<input type="hidden" name="${field}" value="${value}" />`] : [],
  );
  return html`<form method="get" action="${path}">
    ${hidden}
    <label for="${name}">${label}</label>
    <select id="${name}" name="${name}">
      <option value="">All</option>
      ${options.map(
        (option) => html`<option value="${option}" ${option === current ? html` selected` : ''}>${option}</option>`,
      )}
    </select>
    <button type="submit" class="secondary">Filter</button>
  </form>`;
}

/** The query's value of `name` when it is one of `allowed`. */
export function chosen<T extends string>(ctx: Koa.Context, name: string, allowed: readonly T[]): T | undefined {
  const value = ctx.query[name];
  return typeof value === 'string' && (allowed as readonly string[]).includes(value) ? (value as T) : undefined;
}
