// The org's events as the API lists and returns them: each exactly as its deliveries carry it.
import type { components } from '../../generated/openapi.js';
import type { Db } from '../database/connect.js';
import { notFound } from '../errors.js';
import { unknownCursor, type PageStart } from '../contract/pagination.js';
import { eventEnvelope } from './delivery/envelope.js';
import { findEventRow, listEventRows, type EventFilter } from './event-queries.js';

/** An event in API form: the body of its deliveries. */
export type Event = components['schemas']['WebhookEvent'];

/** The envelope every delivery of a stored event carries (its data was checked against the spec when emitted). */
function toEvent(row: Parameters<typeof eventEnvelope>[0]): Event {
  return eventEnvelope(row) as Event;
}

/**
 * One page of the org's events matching `filter`, newest first, with the total and whether a cursor
 * page has more beyond it. Throws invalid_request naming the cursor when it is not an event of the org.
 */
export async function listEvents(
  db: Db,
  orgId: string,
  filter: EventFilter,
  page: { limit: number; start: PageStart },
): Promise<{ items: Event[]; total: number; more: boolean }> {
  const { start } = page;
  if ('cursor' in start && !(await findEventRow(db, orgId, start.cursor))) throw unknownCursor(start.side);
  const { rows, total, more } = await listEventRows(db, orgId, filter, page);
  return { items: rows.map(toEvent), total, more };
}

/** The org's event; throws not_found (param id) for an unknown, removed or foreign id. */
export async function getEvent(db: Db, orgId: string, id: string): Promise<Event> {
  const row = await findEventRow(db, orgId, id);
  if (!row) throw notFound('event');
  return toEvent(row);
}
