// The event outbox: records an event and one pending delivery per subscribed endpoint, inside the
// caller's transaction, so an event exists exactly when the change that caused it commits.
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { Db } from '../database/connect.js';

type Schemas = components['schemas'];

/** The `data` payload of each event kind, as published in the spec. */
export interface EventDataByKind {
  'call.completed': Schemas['CallCompletedData'];
  'call.failed': Schemas['CallFailedData'];
  'call.no_answer': Schemas['CallNoAnswerData'];
  'call.busy': Schemas['CallBusyData'];
  'call.canceled': Schemas['CallCanceledData'];
  'contact.created': Schemas['ContactCreatedData'];
  'webhook.test': Schemas['WebhookTestData'];
}

export type EventKind = keyof EventDataByKind;

/** The channel notified (on commit) when new deliveries are due. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

/** A new event id: `evt_` and 24 random characters from a CSPRNG. */
export function newEventId(): string {
  let id = 'evt_';
  for (let i = 0; i < 24; i += 1) id += ID_ALPHABET[randomInt(ID_ALPHABET.length)];
  return id;
}

/**
 * Records events of one kind for an org and queues a delivery of each to every active endpoint
 * subscribed to that kind. Must run inside the transaction of the state change the events report.
 * Returns the new event ids in the order of `payloads`.
 */
export async function emitEvents<K extends EventKind>(
  trx: Db,
  orgId: string,
  kind: K,
  payloads: Array<EventDataByKind[K]>,
): Promise<string[]> {
  if (payloads.length === 0) return [];
  const ids = payloads.map(() => newEventId());
  await trx
    .insertInto('events')
    .values(payloads.map((data, i) => ({ id: ids[i]!, org_id: orgId, kind, data: JSON.stringify(data) })))
    .execute();
  const queued = await sql`
    INSERT INTO webhook_deliveries (webhook_id, org_id, event_id, status, next_attempt_at)
    SELECT w.id, w.org_id, e.id, 'pending', now()
    FROM webhooks w CROSS JOIN unnest(${ids}::text[]) AS e(id)
    WHERE w.org_id = ${orgId}::uuid AND w.active AND ${kind} = ANY(w.events)
    -- Locks the endpoints it queues for: a concurrent DELETE then waits for this transaction,
    -- and an endpoint deleted meanwhile is skipped instead of failing the foreign key.
    FOR KEY SHARE OF w`.execute(trx);
  if (Number(queued.numAffectedRows ?? 0) > 0) {
    await sql`SELECT pg_notify(${DELIVERY_CHANNEL}, ${ids[0]!})`.execute(trx);
  }
  return ids;
}

/** Records one event and queues its deliveries (see emitEvents); returns the event id. */
export async function emitEvent<K extends EventKind>(
  trx: Db,
  orgId: string,
  kind: K,
  data: EventDataByKind[K],
): Promise<string> {
  const [id] = await emitEvents(trx, orgId, kind, [data]);
  return id!;
}
