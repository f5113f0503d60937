// SQL for campaigns and their contacts: the campaign row and its contacts chosen in one INSERT ... SELECT
// each, the Idempotency-Key lookups, the guarded state changes, the newest-first list, the contacts in
// list order, and the counters (one grouped statement over the contacts and the campaign's calls).
import { sql, type Insertable, type Selectable } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { CampaignContactsTable, CampaignsTable } from '../../db/schema.js';
import type { Db } from '../database/connect.js';
import { countRows, cursorPage, readPageAndTotal, type PageStart } from '../database/keyset.js';

/** A campaign as stored. */
export type CampaignRow = Selectable<CampaignsTable>;
/** A contact of a campaign as stored. */
export type CampaignContactRow = Selectable<CampaignContactsTable>;
/** Where a campaign's contacts stand, as the API's counters say. */
export type CampaignCounters = components['schemas']['CampaignCounters'];
type CampaignStatus = CampaignRow['status'];

/** Inserts a campaign (its contacts_total still 0); returns its row, or undefined when its Idempotency-Key is taken. */
export async function insertCampaignRow(
  db: Db,
  campaign: Insertable<CampaignsTable>,
): Promise<CampaignRow | undefined> {
  return db
    .insertInto('campaigns')
    .values(campaign)
    .onConflict((conflict) =>
      conflict.columns(['org_id', 'idempotency_key']).where('idempotency_key', 'is not', null).doNothing(),
    )
    .returningAll()
    .executeTakeFirst();
}

/** The per-contact columns copied at creation: state pending, or skipped when its consent is excluded. */
function chosenContactColumns(excluded: readonly string[]) {
  return sql`c.phone_e164, c.consent_capture,
    CASE WHEN c.consent_capture = ANY(${excluded}::text[]) THEN 'skipped' ELSE 'pending' END,
    CASE WHEN c.consent_capture = ANY(${excluded}::text[]) THEN 'consent_excluded' END`;
}

/**
 * Adds the org's contacts among `contactIds` to the campaign, positioned in the order given, in one
 * statement; returns how many were added (fewer than given when some id names no contact of the org).
 */
export async function insertChosenContacts(
  db: Db,
  campaign: { id: string; orgId: string; excluded: readonly string[] },
  contactIds: readonly string[],
): Promise<number> {
  const result = await sql`
    INSERT INTO campaign_contacts
      (campaign_id, contact_id, org_id, position, phone_e164, consent_capture, state, skip_reason)
    SELECT ${campaign.id}::uuid, c.id, c.org_id, chosen.position::integer, ${chosenContactColumns(campaign.excluded)}
    FROM unnest(${contactIds}::uuid[]) WITH ORDINALITY AS chosen (id, position)
    JOIN contacts c ON c.id = chosen.id AND c.org_id = ${campaign.orgId}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** The index (from 0) of the first of `contactIds` that names no contact of the org, or undefined. */
export async function firstUnknownContact(
  db: Db,
  orgId: string,
  contactIds: readonly string[],
): Promise<number | undefined> {
  const { rows } = await sql<{ position: string }>`
    SELECT chosen.position FROM unnest(${contactIds}::uuid[]) WITH ORDINALITY AS chosen (id, position)
    WHERE NOT EXISTS (SELECT 1 FROM contacts c WHERE c.id = chosen.id AND c.org_id = ${orgId})
    ORDER BY chosen.position LIMIT 1`.execute(db);
  return rows[0] ? Number(rows[0].position) - 1 : undefined;
}

/**
 * Adds every contact of the org (or those whose consent_capture is one of `consent`) to the campaign,
 * oldest contact first, in one statement; returns how many were added.
 */
export async function insertFilteredContacts(
  db: Db,
  campaign: { id: string; orgId: string; excluded: readonly string[] },
  consent: readonly string[] | undefined,
): Promise<number> {
  const result = await sql`
    INSERT INTO campaign_contacts
      (campaign_id, contact_id, org_id, position, phone_e164, consent_capture, state, skip_reason)
    SELECT ${campaign.id}::uuid, c.id, c.org_id, (row_number() OVER (ORDER BY c.created_at, c.id))::integer,
           ${chosenContactColumns(campaign.excluded)}
    FROM contacts c
    WHERE c.org_id = ${campaign.orgId}
      ${consent ? sql`AND c.consent_capture = ANY(${consent}::text[])` : sql``}`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Stores how many contacts the campaign has; returns its row. */
export async function setContactsTotal(db: Db, campaignId: string, total: number): Promise<CampaignRow> {
  return db
    .updateTable('campaigns')
    .set({ contacts_total: total })
    .where('id', '=', campaignId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Forgets the org's Idempotency-Key `key` when the campaign holding it was created before `before`. */
export async function releaseExpiredKey(db: Db, orgId: string, key: string, before: Date): Promise<void> {
  await db
    .updateTable('campaigns')
    .set({ idempotency_key: null, request_hash: null })
    .where('org_id', '=', orgId)
    .where('idempotency_key', '=', key)
    .where('created_at', '<', before)
    .execute();
}

/** The org's campaign created with the Idempotency-Key `key`, or undefined. */
export async function findCampaignByKey(db: Db, orgId: string, key: string): Promise<CampaignRow | undefined> {
  return db
    .selectFrom('campaigns')
    .selectAll()
    .where('org_id', '=', orgId)
    .where('idempotency_key', '=', key)
    .executeTakeFirst();
}

/** The org's campaign with this id, or undefined. */
export async function findCampaignRow(db: Db, orgId: string, id: string): Promise<CampaignRow | undefined> {
  return db.selectFrom('campaigns').selectAll().where('org_id', '=', orgId).where('id', '=', id).executeTakeFirst();
}

/**
 * Moves the org's campaign to `status` (with `pausedReason`) when it is in one of `from`; returns the
 * changed row, or undefined when it is not in one of them (or is not the org's).
 */
export async function moveCampaign(
  db: Db,
  campaign: { orgId: string; id: string },
  from: readonly CampaignStatus[],
  to: { status: CampaignStatus; pausedReason: CampaignRow['paused_reason'] },
): Promise<CampaignRow | undefined> {
  return db
    .updateTable('campaigns')
    .set({ status: to.status, paused_reason: to.pausedReason, updated_at: sql`clock_timestamp()` })
    .where('org_id', '=', campaign.orgId)
    .where('id', '=', campaign.id)
    .where('status', 'in', from)
    .returningAll()
    .executeTakeFirst();
}

/**
 * Resumes the org's paused campaign: running when its starts_at is at or before `now`, else scheduled;
 * returns the changed row, or undefined when it is not paused (or is not the org's).
 */
export async function resumeCampaignRow(
  db: Db,
  campaign: { orgId: string; id: string },
  now: Date,
): Promise<CampaignRow | undefined> {
  return db
    .updateTable('campaigns')
    .set({
      status: sql<CampaignStatus>`CASE WHEN starts_at <= ${now} THEN 'running' ELSE 'scheduled' END`,
      paused_reason: null,
      updated_at: sql`clock_timestamp()`,
    })
    .where('org_id', '=', campaign.orgId)
    .where('id', '=', campaign.id)
    .where('status', '=', 'paused')
    .returningAll()
    .executeTakeFirst();
}

/** Cancels the campaign's contacts still waiting for a call; returns how many. */
export async function cancelPendingContacts(db: Db, campaignId: string): Promise<number> {
  const result = await db
    .updateTable('campaign_contacts')
    .set({ state: 'canceled', next_attempt_at: null, updated_at: sql`clock_timestamp()` })
    .where('campaign_id', '=', campaignId)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Whether the org has a campaign with this id (a cursor must name one). */
export async function hasCampaignId(db: Db, orgId: string, id: string): Promise<boolean> {
  return (await findCampaignRow(db, orgId, id)) !== undefined;
}

/**
 * One page of the org's campaigns (in `status` when given), newest first (ties by id), with the list's
 * total; `more` tells whether a cursor page has more beyond it.
 */
export async function listCampaignRows(
  db: Db,
  orgId: string,
  page: { limit: number; status: CampaignStatus | undefined } & PageStart,
) {
  const matching = db
    .selectFrom('campaigns')
    .where('org_id', '=', orgId)
    .$if(page.status !== undefined, (qb) => qb.where('status', '=', page.status!));
  return readPageAndTotal(
    { rows: matching.selectAll(), table: 'campaigns', columns: ['created_at', 'id'] },
    () => countRows(matching),
    { limit: page.limit, start: page },
  );
}

/** Whether the campaign has this contact (a cursor of its contacts list must name one). */
export async function hasCampaignContact(db: Db, campaignId: string, contactId: string): Promise<boolean> {
  const found = await db
    .selectFrom('campaign_contacts')
    .select('position')
    .where('campaign_id', '=', campaignId)
    .where('contact_id', '=', contactId)
    .executeTakeFirst();
  return found !== undefined;
}

/**
 * One page of the campaign's contacts in list order (position), from `offset` or beside the contact a
 * cursor names; `more` tells whether a cursor page has more beyond it.
 */
export async function listCampaignContactRows(
  db: Db,
  campaignId: string,
  page: { limit: number } & PageStart,
): Promise<{ rows: CampaignContactRow[]; more: boolean }> {
  const base = db.selectFrom('campaign_contacts').selectAll().where('campaign_id', '=', campaignId);
  if (!('cursor' in page)) {
    const rows = await base.orderBy('position').limit(page.limit).offset(page.offset).execute();
    return { rows, more: false };
  }
  const after = page.side === 'after';
  const at = sql<number>`(SELECT position FROM campaign_contacts
                          WHERE campaign_id = ${campaignId} AND contact_id = ${page.cursor})`;
  const found = await base
    .where('position', after ? '>' : '<', at)
    .orderBy('position', after ? 'asc' : 'desc')
    .limit(page.limit + 1)
    .execute();
  return cursorPage(found, page.limit, page.side);
}

/**
 * The counters of each of `campaignIds`, by id, from one statement: the contacts grouped by state (and
 * skip reason), and the calls the campaign placed with what they were charged. Ids without contacts
 * are left out.
 */
export async function campaignCounters(db: Db, campaignIds: readonly string[]): Promise<Map<string, CampaignCounters>> {
  if (campaignIds.length === 0) return new Map();
  const { rows } = await sql<Record<string, string | number>>`
    WITH contacts AS (
      SELECT campaign_id,
             count(*) AS contacts_total,
             count(*) FILTER (WHERE state = 'pending' OR (state = 'calling' AND claimed_until IS NOT NULL)) AS pending,
             count(*) FILTER (WHERE state = 'calling' AND claimed_until IS NULL) AS in_progress,
             count(*) FILTER (WHERE state = 'completed') AS completed,
             count(*) FILTER (WHERE state = 'failed') AS failed,
             count(*) FILTER (WHERE state = 'no_answer') AS no_answer,
             count(*) FILTER (WHERE state = 'busy') AS busy,
             count(*) FILTER (WHERE state = 'expired') AS expired,
             count(*) FILTER (WHERE state = 'canceled') AS canceled,
             count(*) FILTER (WHERE state = 'skipped') AS skipped,
             count(*) FILTER (WHERE skip_reason = 'suppressed') AS suppressed,
             count(*) FILTER (WHERE skip_reason = 'consent_excluded') AS consent_excluded
      FROM campaign_contacts WHERE campaign_id = ANY(${campaignIds}::uuid[])
      GROUP BY campaign_id),
    placed AS (
      SELECT campaign_id, count(*) AS calls_placed, sum(credits_debited_paise) AS credits_charged_paise
      FROM calls WHERE campaign_id = ANY(${campaignIds}::uuid[])
      GROUP BY campaign_id)
    SELECT contacts.*, coalesce(placed.calls_placed, 0) AS calls_placed,
           coalesce(placed.credits_charged_paise, 0) AS credits_charged_paise
    FROM contacts LEFT JOIN placed USING (campaign_id)`.execute(db);
  const counters = new Map<string, CampaignCounters>();
  for (const row of rows) {
    const count = (name: string) => Number(row[name]);
    counters.set(String(row.campaign_id), {
      contacts_total: count('contacts_total'),
      pending: count('pending'),
      in_progress: count('in_progress'),
      completed: count('completed'),
      failed: count('failed'),
      no_answer: count('no_answer'),
      busy: count('busy'),
      expired: count('expired'),
      canceled: count('canceled'),
      skipped: {
        total: count('skipped'),
        suppressed: count('suppressed'),
        consent_excluded: count('consent_excluded'),
      },
      calls_placed: count('calls_placed'),
      credits_charged_paise: count('credits_charged_paise'),
    });
  }
  return counters;
}
