// SQL for webhook endpoints: create, read, change, delete, and their delivery health.
import { sql, type Selectable } from 'kysely';
import type { WebhooksTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';

/** A row of the webhooks table. */
export type WebhookRow = Selectable<WebhooksTable>;

/** Serialises endpoint creation within an org until the transaction ends (for the per-org maximum). */
export async function lockOrgEndpoints(trx: Db, orgId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhooks-of:${orgId}`}, 0))`.execute(trx);
}

/** How many endpoints the org has. */
export async function countWebhooks(db: Db, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

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

/** One page of the org's endpoints, newest first, with the total count. */
export async function listWebhookRows(
  db: Db,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ rows: WebhookRow[]; total: number }> {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('webhooks')
      .selectAll()
      .where('org_id', '=', orgId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(page.limit)
      .offset(page.offset)
      .execute(),
    countWebhooks(db, orgId),
  ]);
  return { rows, total };
}

/** The org's endpoint with this id, or undefined (also for another org's id). */
export async function findWebhookRow(db: Db, orgId: string, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/** Changes events and/or active; switching on clears the failure streak. Undefined when not found. */
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
    })
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Replaces the secret, keeping the old one valid until `graceUntil`. Undefined when not found. */
export async function rotateSecretRow(
  db: Db,
  orgId: string,
  id: string,
  change: { secret: string; graceUntil: Date; now: Date },
): Promise<WebhookRow | undefined> {
  return db
    .updateTable('webhooks')
    .set((eb) => ({
      previous_secret: eb.ref('secret'),
      previous_secret_expires_at: change.graceUntil,
      secret: change.secret,
      updated_at: change.now,
    }))
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Deletes the endpoint (its deliveries and attempts cascade); false when not found. */
export async function deleteWebhookRow(trx: Db, orgId: string, id: string): Promise<boolean> {
  const result = await trx.deleteFrom('webhooks').where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Locks the endpoint row for recording an attempt (serialises recorders of one endpoint). */
export async function lockWebhookForRecording(trx: Db, id: string): Promise<boolean> {
  const row = await trx.selectFrom('webhooks').select('id').where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
  return row !== undefined;
}
