// Lists read their page and their total in one statement: the total's one-row query left-joined to
// the page (see listCallsPage, listWebhookRows). This splits such a statement's rows apart again.

/**
 * The page's rows and the total from the rows of a page-left-joined-to-its-total statement. The total's
 * row always comes back, with every page column null when the page is empty. Throws when there is no row.
 */
export function splitPageAndTotal<Row>(found: ReadonlyArray<{ total: unknown; id: unknown }>): {
  rows: Row[];
  total: number;
} {
  const first = found[0];
  if (!first) throw new Error('a page-with-total statement returned no row');
  const rows = first.id === null ? [] : found.map(({ total: _total, ...row }) => row as Row);
  return { rows, total: Number(first.total) };
}
