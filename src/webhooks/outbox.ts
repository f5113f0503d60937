// The event outbox: records an event and one pending delivery per subscribed endpoint, inside the
// caller's transaction, so an event exists exactly when the change that caused it commits. Event kinds
// and payload types come from the generated registry (generated/events.ts).
import { randomInt } from 'node:crypto';
import type { EventDataByKind, EventKind } from '../../generated/events.js';
import type { Db } from '../database/connect.js';
import * as events from './event-queries.js';

export type { EventDataByKind, EventKind } from '../../generated/events.js';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A new event id: `evt_` and 24 random characters from a CSPRNG. */
export function newEventId(): string {
  let id = 'evt_';
  for (let i = 0; i < 24; i += 1) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

/** An event to record: its kind, its payload and the traceparent of what caused it (null for background work). */
export type PendingEvent = {
  [K in EventKind]: { kind: K; data: EventDataByKind[K]; traceparent: string | null };
}[EventKind];

/**
 * Records events of an org, of any kinds, and queues a delivery of each to every active endpoint
 * subscribed to its kind, in the order given. Must run inside the transaction of the state change the
 * events report. Returns the new event ids in the order of `pending`; database errors propagate.
 */
export async function emitOrgEvents(trx: Db, orgId: string, pending: readonly PendingEvent[]): Promise<string[]> {
  if (pending.length === 0) return [];
  const made = pending.map((event) => ({ ...event, id: newEventId(), orgId }));
  await events.insertEvents(trx, made);
  if ((await events.queueDeliveries(trx, orgId, made)) > 0) await events.notifyDeliveryWorkers(trx, made[0]!.id);
  return made.map((event) => event.id);
}

/**
 * Records events of one kind for an org, with the traceparent of the request that caused them (null
 * for background work), and queues their deliveries (see emitOrgEvents).
 * Returns the new event ids in the order of `payloads`; database errors propagate.
 */
export async function emitEvents<K extends EventKind>(
  trx: Db,
  orgId: string,
  kind: K,
  payloads: Array<EventDataByKind[K]>,
  traceparent: string | null,
): Promise<string[]> {
  return emitOrgEvents(
    trx,
    orgId,
    payloads.map((data) => ({ kind, data, traceparent }) as PendingEvent),
  );
}

/** Records one event and queues its deliveries (see emitEvents); returns the event id. */
export async function emitEvent<K extends EventKind>(
  trx: Db,
  orgId: string,
  kind: K,
  data: EventDataByKind[K],
  traceparent: string | null,
): Promise<string> {
  const [id] = await emitEvents(trx, orgId, kind, [data], traceparent);
  return id!;
}
