// One page of a list as the API answers it, and a finding of a paging walk kept until the walk is
// known to count (shared by the offset and the cursor walks).
import type { Exchange } from './http.js';

/** The parts of a list answer the paging checks read. */
export interface Page {
  data: Array<{ id?: unknown; contact_id?: unknown; created_at?: unknown }>;
  pagination: { limit?: unknown; offset?: unknown; total?: unknown; has_more?: unknown };
}

/** The page an answer holds, or undefined when it is no page. */
export const pageOf = (exchange: Exchange): Page | undefined => {
  const json = exchange.json as Partial<Page> | undefined;
  return Array.isArray(json?.data) && json.pagination ? (json as Page) : undefined;
};

/** What one answer of a walk broke (maybe nothing), kept until the walk is known to count. */
export interface Finding {
  label: string;
  exchange: Exchange;
  problems: string[];
}

/** What names an item for the list's cursors: its `id`, or a campaign's contact's `contact_id` (it has no id of its own). */
export const itemId = (item: Page['data'][number]): unknown => item.id ?? item.contact_id;
