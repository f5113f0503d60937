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
 * Records an event for an org and queues a delivery to each active endpoint subscribed to its kind.
 * Must run inside the transaction of the state change it reports. Returns the event id.
 */
export async function emitEvent<K extends EventKind>(
  trx: Db,
  orgId: string,
  kind: K,
  data: EventDataByKind[K],
): Promise<string> {
  const id = newEventId();
  await trx
    .insertInto('events')
    .values({ id, org_id: orgId, kind, data: JSON.stringify(data) })
    .execute();
  const queued = await trx
    .insertInto('webhook_deliveries')
    .columns(['webhook_id', 'org_id', 'event_id', 'status', 'next_attempt_at'])
    .expression((eb) =>
      eb
        .selectFrom('webhooks')
        .select([
          'webhooks.id',
          'webhooks.org_id',
          sql<string>`${id}::text`.as('event_id'),
          sql.lit('pending').as('status'),
          sql<Date>`now()`.as('next_attempt_at'),
        ])
        .where('webhooks.org_id', '=', orgId)
        .where('webhooks.active', '=', true)
        .where(sql<boolean>`${kind} = ANY(webhooks.events)`),
    )
    .executeTakeFirst();
  if (Number(queued.numInsertedOrUpdatedRows ?? 0) > 0) {
    await sql`SELECT pg_notify(${DELIVERY_CHANNEL}, ${id})`.execute(trx);
  }
  return id;
}
