// `GET /events` and `GET /events/{id}` against the deliveries the check's receiver got: every event
// delivered is listed (webhook.test ones only under kind=webhook.test) exactly as delivered, newest
// first, and each `kind` filter lists only its kind and every delivered event of it. Only the
// check's own events are looked for, so events the org had before do not matter; walks are bounded.
import { isDeepStrictEqual } from 'node:util';
import { eventKindOf } from './deliveries.js';
import type { Exchange } from './http.js';
import type { LoopbackReceiver } from './receiver.js';
import type { Session } from './session.js';
import type { Operation } from './spec/operations.js';

/** The pages of 100 events a walk reads at most before giving up on the events it has not reached. */
const MAX_PAGES = 10;
const TEST_KIND = 'webhook.test';

/** An event as delivered or listed: the envelope's fields the checks read. */
interface Event {
  id: string;
  event: string;
  created_at: string;
}

/**
 * The events the receiver was delivered at its own URL, once each by id (a redelivery carries the same
 * event); those of another org's endpoint (under another path) are not this org's log.
 */
function deliveredEvents(receiver: LoopbackReceiver): Map<string, Event> {
  const events = new Map<string, Event>();
  const path = new URL(receiver.url).pathname;
  for (const received of receiver.received) {
    if (received.path !== path) continue;
    try {
      const body = JSON.parse(received.rawBody) as Partial<Event>;
      if (typeof body.id === 'string' && typeof body.created_at === 'string' && body.event === eventKindOf(received))
        events.set(body.id, body as Event);
    } catch {
      // Not JSON: judged with every delivery, nothing to look for here.
    }
  }
  return events;
}

/** Whether `a` was created before `b` (the list's tie-break by id is left alone: the check cannot know the collation). */
const older = (a: Event, b: Event) => Date.parse(a.created_at) < Date.parse(b.created_at);

/** What one walk of the list read: the items in order, the answers, and whether it passed `oldest`. */
interface Walked {
  items: Event[];
  exchanges: Map<string, Exchange>;
  first: Exchange | undefined;
  /** Whether the walk got past where `event` belongs: the list ended, or its last item read is older. */
  passed: (event: Event) => boolean;
}

/**
 * Reads the list (with `query`) page by page, by cursor from the first page on, until every one of
 * `wanted` has been seen, the list ends or goes past the oldest of them, or MAX_PAGES were read.
 */
async function walkEvents(
  session: Session,
  operation: Operation,
  query: Record<string, string>,
  wanted: Event[],
): Promise<Walked | undefined> {
  const items: Event[] = [];
  const exchanges = new Map<string, Exchange>();
  const missing = new Set(wanted.map((event) => event.id));
  const oldest = wanted.reduce<Event | undefined>(
    (found, event) => (found && !older(event, found) ? found : event),
    undefined,
  );
  let first: Exchange | undefined;
  let ended = false;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const after = items.at(-1)?.id;
    const exchange = await session.call(
      operation,
      { path: {}, query: { ...query, limit: 100, ...(after ? { starting_after: after } : {}) }, headers: {} },
      { kind: 'success' },
      'scenario',
      `events: the list${query.kind ? ` of kind=${query.kind}` : ''} against the deliveries`,
    );
    first ??= exchange;
    const json = exchange.json as { data?: Event[]; pagination?: { has_more?: unknown } } | undefined;
    if (!Array.isArray(json?.data)) return undefined;
    for (const item of json.data) {
      items.push(item);
      exchanges.set(item.id, exchange);
      missing.delete(item.id);
    }
    const last = items.at(-1);
    ended = json.pagination?.has_more !== true || json.data.length === 0;
    if (ended || missing.size === 0 || (oldest && last && older(last, oldest))) break;
  }
  const last = items.at(-1);
  return { items, exchanges, first, passed: (event) => ended || (last !== undefined && older(last, event)) };
}

/** Problems of a listed event against its delivery, and of its place in the order. */
function listedProblems(walked: Walked, delivered: Map<string, Event>, where: string): Map<Exchange, string[]> {
  const problems = new Map<Exchange, string[]>();
  const add = (exchange: Exchange, problem: string) =>
    problems.set(exchange, [...(problems.get(exchange) ?? []), problem]);
  walked.items.forEach((item, index) => {
    const exchange = walked.exchanges.get(item.id)!;
    const sent = delivered.get(item.id);
    if (sent && !isDeepStrictEqual(item, sent))
      add(
        exchange,
        `${where} lists ${item.id} as ${JSON.stringify(item)}, but it was delivered as ${JSON.stringify(sent)}`,
      );
    const previous = walked.items[index - 1];
    if (previous && Date.parse(item.created_at) > Date.parse(previous.created_at))
      add(
        exchange,
        `${where} is not newest first: ${item.id} (created ${item.created_at}) follows ${previous.id} (created ${previous.created_at})`,
      );
  });
  return problems;
}

/** Flags what a walk shows about the events looked for (`wanted`): each must be listed where the walk reached. */
function judgeWalk(
  session: Session,
  operation: Operation,
  walked: Walked,
  delivered: Map<string, Event>,
  wanted: Event[],
  where: string,
  listedWrongly: (item: Event) => string | undefined,
): void {
  const label = `events: ${where} against the deliveries`;
  const problems = listedProblems(walked, delivered, where);
  for (const item of walked.items) {
    const wrong = listedWrongly(item);
    const exchange = walked.exchanges.get(item.id)!;
    if (wrong) problems.set(exchange, [...(problems.get(exchange) ?? []), wrong]);
  }
  for (const [exchange, found] of problems) session.flag(operation, 'scenario', label, exchange, found);
  const listed = new Set(walked.items.map((item) => item.id));
  const absent = wanted.filter((event) => !listed.has(event.id));
  const unreached = absent.filter((event) => !walked.passed(event));
  session.flag(
    operation,
    'scenario',
    label,
    walked.first,
    absent
      .filter((event) => walked.passed(event))
      .map((event) => `${where} does not list the ${event.event} event ${event.id} the receiver was delivered`),
  );
  if (unreached.length > 0)
    session.note(
      operation.id,
      `${unreached.length} delivered events not looked for in ${where}: more than ${MAX_PAGES * 100} newer events`,
    );
}

/** `GET /events/{id}` of the newest delivered event of each kind returns it exactly as delivered. */
async function getEvents(session: Session, operation: Operation, delivered: Event[]): Promise<void> {
  const newest = new Map<string, Event>();
  for (const event of delivered)
    if (!newest.has(event.event) || older(newest.get(event.event)!, event)) newest.set(event.event, event);
  for (const event of newest.values()) {
    await session.call(
      operation,
      { path: { id: event.id }, query: {}, headers: {} },
      { kind: 'success' },
      'scenario',
      `events: a delivered ${event.event} event by id`,
      (exchange) => {
        const got = (exchange.json as { data?: unknown } | undefined)?.data;
        return exchange.status !== 200 || isDeepStrictEqual(got, event)
          ? []
          : [
              `GET /events/${event.id} returns ${JSON.stringify(got)}, but it was delivered as ${JSON.stringify(event)}`,
            ];
      },
    );
  }
}

/** Compares the event log with every delivery the receiver got so far (call it once the awaited events arrived). */
export async function checkEventLog(session: Session, receiver: LoopbackReceiver): Promise<void> {
  const list = session.operation('listEvents');
  const get = session.operation('getEvent');
  const delivered = deliveredEvents(receiver);
  if (!list || delivered.size === 0) return;
  const events = [...delivered.values()];
  const changes = events.filter((event) => event.event !== TEST_KIND);
  const unfiltered = await walkEvents(session, list, {}, changes);
  if (unfiltered)
    judgeWalk(session, list, unfiltered, delivered, changes, 'GET /events', (item) =>
      item.event === TEST_KIND
        ? `GET /events lists the ${TEST_KIND} event ${item.id}, listed only under kind=${TEST_KIND}`
        : undefined,
    );
  for (const kind of new Set(events.map((event) => event.event))) {
    const ofKind = events.filter((event) => event.event === kind);
    const where = `GET /events?kind=${kind}`;
    const walked = await walkEvents(session, list, { kind }, ofKind);
    if (walked)
      judgeWalk(session, list, walked, delivered, ofKind, where, (item) =>
        item.event === kind ? undefined : `${where} lists ${item.id}, a ${item.event} event`,
      );
  }
  if (get) await getEvents(session, get, events);
}
