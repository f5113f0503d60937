// SQL for webhook endpoints: create, read, change, the two steps of a deletion, and health. An endpoint
// whose deletion has begun (deleted_at set) is invisible to every read and change here.
import { sql, type Selectable } from 'kysely';
import type { WebhooksTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';
import { prepareQuery, type Arg } from '../database/prepared-query.js';
import { preparedPageWithTotal, type PageStart } from '../database/keyset.js';
import { DELETION_CHANNEL, SWITCH_OFF_CHANNEL } from './channels.js';

/** A row of the webhooks table. */
export type WebhookRow = Selectable<WebhooksTable>;

/**
 * The columns the API shows of an endpoint, named: lists read only these (never the secrets), and
 * prepared statements never select `*` (see database/named-statements.ts).
 */
const SHOWN_COLUMNS = [
  'id',
  'url',
  'events',
  'active',
  'created_at',
  'last_delivery_at',
  'last_delivery_status',
] as const satisfies readonly (keyof WebhookRow)[];

/** An endpoint as a list reads it: the columns the API shows. */
export type ShownWebhookRow = Pick<WebhookRow, (typeof SHOWN_COLUMNS)[number]>;

function live(db: Db) {
  return db.selectFrom('webhooks').where('deleted_at', 'is', null);
}

/** Serialises endpoint creation within an org until the transaction ends (for the per-org maximum). */
export async function lockOrgEndpoints(trx: Db, orgId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhooks-of:${orgId}`}, 0))`.execute(trx);
}

/** How many endpoints the org has. */
export async function countWebhooks(db: Db, orgId: string): Promise<number> {
  const [row] = await webhookCount.execute(db, { orgId });
  return Number(row!.count);
}

const webhookCount = prepareQuery((db, arg: Arg<{ orgId: string }>) =>
  live(db)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('org_id', '=', arg('orgId')),
);

/** Inserts an endpoint and returns its row. */
export async function insertWebhook(
  db: Db,
  values: { orgId: string; url: string; events: string[]; secret: string; now: Date },
): Promise<WebhookRow> {
  return db
    .insertInto('webhooks')
    .values({
      org_id: values.orgId,
      url: values.url,
      events: values.events,
      secret: values.secret,
      created_at: values.now,
      updated_at: values.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * One page of the org's endpoints, newest first (ties by id), with how many it has, in one statement:
 * after `offset` endpoints, or next to the endpoint `cursor` on its `side` (`more` then tells whether
 * endpoints lie beyond the page; none passes an unknown cursor).
 */
export async function listWebhookRows(
  db: Db,
  orgId: string,
  page: { limit: number } & PageStart,
): Promise<{ rows: ShownWebhookRow[]; total: number; more: boolean }> {
  return webhookPages(db, { orgId }, { limit: page.limit, start: page });
}

/** The reader of the org's endpoints with how many it has. */
const webhookPages = preparedPageWithTotal((db, arg: Arg<{ orgId: string }>) => ({
  list: {
    rows: live(db).select(SHOWN_COLUMNS).where('org_id', '=', arg('orgId')),
    table: 'webhooks',
    columns: ['created_at', 'id'],
  },
  total: live(db)
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('org_id', '=', arg('orgId')),
}));

/** The org's endpoint with this id, or undefined (also for another org's id). */
export async function findWebhookRow(db: Db, orgId: string, id: string): Promise<WebhookRow | undefined> {
  return live(db).selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/**
 * Inside a transaction: the org's endpoint with this id, share-locked until the transaction ends, so a
 * switch-off or deletion of it waits (and one already under way is waited for and then seen). Take it
 * last: it also holds up the delivery worker's recording of attempts to the endpoint.
 */
export async function lockWebhookRow(trx: Db, orgId: string, id: string): Promise<WebhookRow | undefined> {
  return live(trx).selectAll().where('org_id', '=', orgId).where('id', '=', id).forShare().executeTakeFirst();
}

/**
 * Whether the endpoint is still live, keeping it from being removed until the transaction ends (the
 * lock a foreign key check takes, which a change of its columns does not wait for).
 */
export async function holdLiveWebhook(trx: Db, orgId: string, id: string): Promise<boolean> {
  const row = await live(trx)
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .forKeyShare()
    .executeTakeFirst();
  return row !== undefined;
}

/** Whether a live endpoint with this id exists, in any org (for operators). */
export async function webhookExists(db: Db, id: string): Promise<boolean> {
  return (await live(db).select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/**
 * Changes events and/or active; switching on clears the failure streak, switching off drops every
 * delivery pending now (a cut in the seq order: see dropped_before_seq) without touching those rows.
 * Undefined when not found.
 */
export async function updateWebhookRow(
  db: Db,
  orgId: string,
  id: string,
  change: { events?: string[]; active?: boolean; now: Date },
): Promise<WebhookRow | undefined> {
  return db
    .updateTable('webhooks')
    .set({
      updated_at: change.now,
      ...(change.events !== undefined ? { events: change.events } : {}),
      ...(change.active !== undefined ? { active: change.active } : {}),
      ...(change.active === true ? { failing_since: null } : {}),
      ...(change.active === false ? { dropped_before_seq: nextDeliverySeq } : {}),
    })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** A seq no delivery has yet: every delivery queued before it has a lower one. */
const nextDeliverySeq = sql<string>`nextval(pg_get_serial_sequence('webhook_deliveries', 'seq'))`;

/**
 * Replaces the secret; the old one keeps signing until `graceUntil`, and so do earlier ones until their
 * own ends of grace (those already over are dropped). With `graceUntil` null every replaced secret
 * stops signing now. Concurrent rotations queue on the row and each keeps its predecessor. 'not_found'
 * when there is no such endpoint; 'too_many' (nothing changed) when `maxPrevious` replaced secrets are
 * still signing and the rotation keeps them.
 */
export async function rotateSecretRow(
  db: Db,
  orgId: string,
  id: string,
  change: { secret: string; graceUntil: Date | null; now: Date; maxPrevious: number },
): Promise<WebhookRow | 'not_found' | 'too_many'> {
  const stillSigning = sql`(
    SELECT coalesce(jsonb_agg(p ORDER BY p->>'expires_at' DESC), '[]'::jsonb)
    FROM jsonb_array_elements(webhooks.previous_secrets) AS p
    WHERE (p->>'expires_at')::timestamptz > ${change.now})`;
  const graceUntil = change.graceUntil;
  let query = db
    .updateTable('webhooks')
    .set({
      previous_secrets:
        graceUntil === null
          ? sql`'[]'::jsonb`
          : sql`jsonb_build_array(jsonb_build_object('secret', webhooks.secret, 'expires_at', ${graceUntil.toISOString()}::text)) || ${stillSigning}`,
      secret: change.secret,
      updated_at: change.now,
    })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null);
  if (graceUntil !== null)
    query = query.where(sql<boolean>`jsonb_array_length(${stillSigning}) < ${change.maxPrevious}`);
  const row = await query.returningAll().executeTakeFirst();
  if (row) return row;
  return (await findWebhookRow(db, orgId, id)) ? 'too_many' : 'not_found';
}

/**
 * Locks the org's live endpoint until the transaction ends, waiting for transactions that queue or claim
 * deliveries to it (a claim that waits for this lock then sees the change made under it). False when
 * the org has no such endpoint.
 */
export async function lockWebhookAgainstClaims(trx: Db, orgId: string, id: string): Promise<boolean> {
  const row = await live(trx)
    .select('id')
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

/** The first step of a deletion, on a locked endpoint: marks it deleted and switched off. */
export async function markWebhookDeleted(trx: Db, id: string, now: Date): Promise<void> {
  await trx
    .updateTable('webhooks')
    .set({ deleted_at: now, active: false, updated_at: now })
    .where('id', '=', id)
    .execute();
}

/** Of the endpoints `ids`, those whose deletion has begun (or that no longer exist), and those switched off. */
export async function findStoppedWebhooks(
  db: Db,
  ids: string[],
): Promise<{ deleted: string[]; switchedOff: string[] }> {
  if (ids.length === 0) return { deleted: [], switchedOff: [] };
  const { rows } = await sql<{ id: string; deleted: boolean }>`
    SELECT i.id, (w.id IS NULL OR w.deleted_at IS NOT NULL) AS deleted
    FROM unnest(${ids}::uuid[]) AS i(id) LEFT JOIN webhooks w ON w.id = i.id
    WHERE w.id IS NULL OR w.deleted_at IS NOT NULL OR NOT w.active`.execute(db);
  return {
    deleted: rows.filter((row) => row.deleted).map((row) => row.id),
    switchedOff: rows.filter((row) => !row.deleted).map((row) => row.id),
  };
}

/**
 * Tells every process that the endpoint's deletion has begun, or that it was switched off, so they stop
 * their sends to it. Sent at once, outside any transaction (a notification made inside one is only
 * delivered at its commit).
 */
export async function notifyEndpointStopped(db: Db, id: string, why: 'deleted' | 'switched_off'): Promise<void> {
  await sql`SELECT pg_notify(${why === 'deleted' ? DELETION_CHANNEL : SWITCH_OFF_CHANNEL}, ${id})`.execute(db);
}

/** The last step of a deletion: removes a marked endpoint (its deliveries and attempts cascade). */
export async function removeDeletedWebhook(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhooks').where('id', '=', id).where('deleted_at', 'is not', null).execute();
}

/** Up to `limit` endpoints whose deletion began before `before` and is not finished yet. */
export async function findUnfinishedDeletions(db: Db, before: Date, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('webhooks')
    .select('id')
    .where('deleted_at', '<', before)
    .orderBy('deleted_at')
    .limit(limit)
    .execute();
  return rows.map((row) => row.id);
}

/** Up to `limit` live endpoints that still have pending deliveries dropped by a switch-off. */
export async function findEndpointsWithDroppedDeliveries(db: Db, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT w.id FROM webhooks w
    WHERE w.deleted_at IS NULL AND w.dropped_before_seq > 0
      AND EXISTS (SELECT 1 FROM webhook_deliveries d
                  WHERE d.webhook_id = w.id AND d.status = 'pending' AND d.seq < w.dropped_before_seq)
    LIMIT ${limit}`.execute(db);
  return rows.map((row) => row.id);
}

/** The org of the live endpoint with this id, whatever the org (for operators), or undefined. */
export async function findWebhookOrg(db: Db, id: string): Promise<string | undefined> {
  return (await live(db).select('org_id').where('id', '=', id).executeTakeFirst())?.org_id;
}
