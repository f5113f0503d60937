// Paging through every list the spec declares: `limit` and `offset` are honoured, `pagination`
// agrees with the pages, items come newest first, no item shows up on two pages of a list that
// does not change meanwhile, and cursor pages follow the offset order (cursor-walks.ts).
import type { Collection, Fixtures } from './fixtures.js';
import { cursorWalks, unknownCursors } from './cursor-walks.js';
import { itemId, pageOf, type Finding, type Page } from './page.js';
import type { Session } from './session.js';
import type { Operation } from './spec/operations.js';

/** The page size the scenario walks with, and how many items of a list it walks at most. */
const PAGE = 2;
const WALKED = 7;

/** What is wrong with one page asked for with `limit` and `offset`, given the list's `total`. */
function pageProblems(page: Page, limit: number, offset: number, total: number): string[] {
  const problems: string[] = [];
  const { pagination } = page;
  const expected = Math.max(0, Math.min(limit, total - offset));
  if (pagination.limit !== limit)
    problems.push(`asked for limit=${limit}, pagination.limit is ${String(pagination.limit)}`);
  if (pagination.offset !== offset)
    problems.push(`asked for offset=${offset}, pagination.offset is ${String(pagination.offset)}`);
  if (pagination.total !== total)
    problems.push(`pagination.total changed from ${total} to ${String(pagination.total)}`);
  if (page.data.length !== expected)
    problems.push(`limit=${limit} offset=${offset} of ${total} items must return ${expected}, got ${page.data.length}`);
  const more = offset + page.data.length < total;
  if (pagination.has_more !== more)
    problems.push(
      `has_more is ${String(pagination.has_more)} with ${offset + page.data.length} of ${total} items seen`,
    );
  return problems;
}

/** Items out of the documented order (newest first by created_at). */
function orderProblems(items: Page['data']): string[] {
  for (let index = 1; index < items.length; index += 1) {
    const before = Date.parse(String(items[index - 1]!.created_at));
    const after = Date.parse(String(items[index]!.created_at));
    if (after > before)
      return [
        `items are not newest first: ${String(itemId(items[index]!))} (created ${String(items[index]!.created_at)}) follows an older one`,
      ];
  }
  return [];
}

/** How many walks a list that keeps changing gets before its last walk is judged as it is. */
const WALKS = 5;
/** The pause before walking again, doubled each time (0.5, 1, 2, 4 s) to fit between a call's events. */
const FIRST_RETRY_PAUSE_MS = 500;

/** The ids and total of a reference page, to tell whether the list changed between two reads. */
const fingerprint = (page: Page) => JSON.stringify([page.pagination.total, page.data.map(itemId)]);

/**
 * Walks one list once: a one-page reference read, pages of two, a page past the end, the cursor
 * walks, and the reference read again. Returns what broke the paging contract, and whether that counts (`final`):
 * the list stood still, or an answer was no page and the walk could not go on.
 */
async function walkOnce(
  session: Session,
  operation: Operation,
  path: Record<string, string>,
): Promise<{ findings: Finding[]; final: boolean; sample?: string }> {
  const input = (limit: number, offset: number) => ({ path, query: { limit, offset }, headers: {} });
  const label = (text: string) => `paging: ${text}`;
  const findings: Finding[] = [];
  const first = await session.call(operation, input(100, 0), { kind: 'success' }, 'scenario', label('reference page'));
  const reference = pageOf(first);
  if (!reference) return { findings, final: true };
  const total = Number(reference.pagination.total);
  findings.push({
    label: label('reference page'),
    exchange: first,
    problems: [...pageProblems(reference, 100, 0, total), ...orderProblems(reference.data)],
  });
  const walked = Math.min(total, WALKED, reference.data.length);
  const seen = new Map<unknown, number>();
  for (let offset = 0; offset < walked; offset += PAGE) {
    const text = label(`limit=${PAGE} offset=${offset}`);
    const exchange = await session.call(operation, input(PAGE, offset), { kind: 'success' }, 'scenario', text);
    const page = pageOf(exchange);
    if (!page) return { findings, final: true };
    const problems = pageProblems(page, PAGE, offset, total);
    page.data.forEach((item, index) => {
      const id = itemId(item);
      const at = reference.data[offset + index];
      const expected = at && itemId(at);
      if (seen.has(id)) problems.push(`item ${String(id)} is on the page at offset ${seen.get(id)} too`);
      else if (id !== expected)
        problems.push(`item ${offset + index} is ${String(id)}, but the one-page list has ${String(expected)} there`);
      seen.set(id, offset);
    });
    findings.push({ label: text, exchange, problems });
  }
  const beyond = await session.call(
    operation,
    input(PAGE, total),
    { kind: 'success' },
    'scenario',
    label('offset past the end'),
  );
  const end = pageOf(beyond);
  if (end)
    findings.push({
      label: label('offset past the end'),
      exchange: beyond,
      problems: pageProblems(end, PAGE, total, total),
    });
  const byCursor = await cursorWalks(session, operation, path, reference, total);
  if (!byCursor) return { findings, final: true };
  findings.push(...byCursor);
  const again = pageOf(
    await session.call(operation, input(100, 0), { kind: 'success' }, 'scenario', label('reference page, read again')),
  );
  const head = reference.data[0];
  const sample = head && itemId(head);
  return {
    findings,
    final: again !== undefined && fingerprint(again) === fingerprint(reference),
    ...(typeof sample === 'string' ? { sample } : {}),
  };
}

/**
 * Pages through one list (path values given) and records what breaks its paging contract. A list
 * that changed during the walk (a call finishing emits an event) is walked again; if it never
 * stands still, the last walk's findings are recorded all the same.
 */
async function walk(session: Session, operation: Operation, path: Record<string, string>): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    const { findings, final, sample } = await walkOnce(session, operation, path);
    if (final || attempt === WALKS) {
      for (const finding of findings)
        session.flag(operation, 'scenario', finding.label, finding.exchange, finding.problems);
      if (sample) await unknownCursors(session, operation, path, sample);
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, FIRST_RETRY_PAUSE_MS * 2 ** (attempt - 1)));
  }
}

/**
 * Makes sure each list has a few items (contacts, endpoints, deliveries, calls, suppressions, campaigns
 * and a campaign's contacts), then pages through every list.
 */
export async function paging(session: Session, fixtures: Fixtures): Promise<void> {
  const lists = session.operations.filter((operation) => operation.isList && operation.method === 'GET');
  const contactIds: Array<string | undefined> = [];
  for (let made = 0; made < 3; made += 1) {
    contactIds.push(await fixtures.contactId(true));
    await fixtures.call(true);
    await fixtures.suppression();
  }
  const webhooks = [await fixtures.webhook(true), await fixtures.webhook(true), await fixtures.webhook(true)];
  const webhookId = webhooks[0];
  for (let sent = 0; sent < 3; sent += 1) await fixtures.delivery(webhookId);
  const chosen = contactIds.filter((id) => id !== undefined);
  const campaignIds = [
    await fixtures.campaign(true, chosen),
    await fixtures.campaign(true, chosen),
    await fixtures.campaign(true, chosen),
  ];
  try {
    for (const operation of lists) {
      // The one list under a path id is a resource's own: a campaign's contacts, or an endpoint's deliveries.
      const collection: Collection = operation.path.startsWith('/campaigns/') ? 'campaigns' : 'webhooks';
      const owner = collection === 'campaigns' ? campaignIds[0] : webhookId;
      if (operation.path.includes('{id}') && !owner) {
        session.note(operation.id, `paging not checked: ${await fixtures.unavailable(collection)}`);
        continue;
      }
      await walk(session, operation, operation.path.includes('{id}') ? { id: owner! } : {});
    }
  } finally {
    await fixtures.releaseFresh();
  }
}
