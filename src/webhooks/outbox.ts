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

/**
 * Records events of one kind for an org, with the traceparent of the request that caused them (null
 * for background work), and queues a delivery of each to every active endpoint subscribed to that
 * kind. Must run inside the transaction of the state change the events report.
 * Returns the new event ids in the order of `payloads`; database errors propagate.
 */
export async function emitEvents<K extends EventKind>(
  trx: Db,
  orgId: string,
  kind: K,
  payloads: Array<EventDataByKind[K]>,
  traceparent: string | null,
): Promise<string[]> {
  if (payloads.length === 0) return [];
  const ids = payloads.map(() => newEventId());
  await events.insertEvents(
    trx,
    payloads.map((data, i) => ({ id: ids[i]!, orgId, kind, data, traceparent })),
  );
  if ((await events.queueDeliveries(trx, orgId, kind, ids)) > 0) await events.notifyDeliveryWorkers(trx, ids[0]!);
  return ids;
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
