// SQL of the campaign dispatcher: the campaign read under its row lock, contacts claimed for dialing,
// attempts recorded, ended attempts settled (retried or final), lapsed claims and lost placements given
// back, what is left expired, and the campaign finished.
//
// A statement that locks contacts and then updates them (the claim, the settlements) updates each by
// the physical address (ctid) its own lock returned, and by nothing else: while PostgreSQL's statistics
// predate a campaign (a big campaign created since the last ANALYZE), the planner takes it for a
// campaign of one contact, and given the campaign's id beside the addresses it walks every contact of
// the campaign per batch instead of fetching the rows by address. The addresses are the rows the
// statement itself locked, so they need no other condition.
import { sql } from 'kysely';
import type { Db } from '../../database/connect.js';
import { prepareQuery, type Arg } from '../../database/prepared-query.js';
import type { Selectable } from 'kysely';
import type { CampaignsTable } from '../../../db/schema.js';

/** A campaign as the dispatcher reads it. */
export type DispatchCampaign = Selectable<CampaignsTable> & { live_org_id: string | null };

/** A contact claimed for dialing: its number, the attempt it is about to get and the claim's token. */
export interface ClaimedContact {
  contact_id: string;
  phone_e164: string;
  attempt: number;
  /** The claim's lapse time as PostgreSQL wrote it (to the microsecond): only its holder knows it. */
  claim: string;
}

/** The call statuses that end a call; each is also the state its contact ends in. */
const CALL_ENDINGS = ['completed', 'failed', 'no_answer', 'busy', 'canceled'];

/** The campaign with its org's live org (null for a live org), locked until `trx` ends when `lock`. */
export async function readCampaign(db: Db, campaignId: string, lock: boolean): Promise<DispatchCampaign | undefined> {
  let query = db
    .selectFrom('campaigns')
    .innerJoin('orgs', 'orgs.id', 'campaigns.org_id')
    .selectAll('campaigns')
    .select('orgs.live_org_id')
    .where('campaigns.id', '=', campaignId);
  if (lock) query = query.forNoKeyUpdate('campaigns');
  return query.executeTakeFirst();
}

/** How many of the campaign's contacts are being called (claimed or dialed, not yet settled). */
export async function countCalling(db: Db, campaignId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM campaign_contacts
    WHERE campaign_id = ${campaignId} AND state = 'calling'`.execute(db);
  return rows[0]!.n;
}

/**
 * Claims up to `limit` due pending contacts (retries that are due first, then list order), skipping
 * those whose consent is excluded (they end skipped at once); the others become `calling` with a claim
 * that lapses at `claimedUntil` (plus random microseconds, which make the claim's token unique).
 * Returns the claimed contacts and how many were skipped.
 *
 * Retries and first attempts are two walks of the due index, each in its order and stopped at the
 * limit: one condition `next_attempt_at IS NULL OR next_attempt_at <= now` made PostgreSQL read, sort
 * and spill every pending contact of the campaign (100,000 in the benchmark) for each claim.
 */
export async function claimDueContacts(
  trx: Db,
  campaign: { id: string; excludedConsent: string[] },
  limit: number,
  now: Date,
  claimedUntil: Date,
): Promise<{ claimed: ClaimedContact[]; skipped: number }> {
  const { rows } = await sql<{
    contact_id: string;
    phone_e164: string;
    attempts: number;
    state: string;
    claim: string;
  }>`
    WITH retries AS (
      SELECT ctid AS row_id FROM campaign_contacts
      WHERE campaign_id = ${campaign.id} AND state = 'pending' AND next_attempt_at <= ${now}
      ORDER BY next_attempt_at, position
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), first_attempts AS (
      SELECT ctid AS row_id FROM campaign_contacts
      WHERE campaign_id = ${campaign.id} AND state = 'pending' AND next_attempt_at IS NULL
      ORDER BY next_attempt_at, position
      LIMIT ${limit} - (SELECT count(*) FROM retries)
      FOR UPDATE SKIP LOCKED
    ), due AS (
      SELECT row_id FROM retries UNION ALL SELECT row_id FROM first_attempts
    )
    UPDATE campaign_contacts cc SET
      state = CASE WHEN cc.consent_capture = ANY(${campaign.excludedConsent}::text[]) THEN 'skipped' ELSE 'calling' END,
      skip_reason = CASE WHEN cc.consent_capture = ANY(${campaign.excludedConsent}::text[]) THEN 'consent_excluded' END,
      claimed_until = CASE WHEN cc.consent_capture = ANY(${campaign.excludedConsent}::text[]) THEN NULL
                           ELSE ${claimedUntil}::timestamptz + make_interval(secs => random() / 1000) END,
      next_attempt_at = NULL,
      updated_at = clock_timestamp()
    WHERE cc.ctid = ANY (ARRAY(SELECT row_id FROM due))
    RETURNING cc.contact_id, cc.phone_e164, cc.attempts, cc.state, cc.claimed_until::text AS claim`.execute(trx);
  const claimed = rows
    .filter((row) => row.state === 'calling')
    .map((row) => ({
      contact_id: row.contact_id,
      phone_e164: row.phone_e164,
      attempt: row.attempts + 1,
      claim: row.claim,
    }));
  return { claimed, skipped: rows.length - claimed.length };
}

/**
 * Records that the claimed contacts' attempts are being placed as the given calls, in one statement.
 * Returns the contact ids recorded; a contact whose claim is no longer this dispatcher's (it lapsed, and
 * the contact was given back or claimed again) is left out.
 */
export async function recordAttempts(
  trx: Db,
  campaignId: string,
  attempts: Array<{ contact: ClaimedContact; callId: string }>,
): Promise<Set<string>> {
  if (attempts.length === 0) return new Set();
  const { rows } = await sql<{ contact_id: string }>`
    UPDATE campaign_contacts cc SET attempts = a.attempt, previous_call_id = cc.last_call_id, last_call_id = a.call_id,
      claimed_until = NULL,
      updated_at = clock_timestamp()
    FROM unnest(${attempts.map((a) => a.contact.contact_id)}::uuid[], ${attempts.map((a) => a.contact.claim)}::timestamptz[],
                ${attempts.map((a) => a.contact.attempt)}::smallint[], ${attempts.map((a) => a.callId)}::uuid[])
      AS a (contact_id, claim, attempt, call_id)
    WHERE cc.campaign_id = ${campaignId} AND cc.contact_id = a.contact_id AND cc.state = 'calling'
      AND cc.claimed_until = a.claim
    RETURNING cc.contact_id`.execute(trx);
  return new Set(rows.map((row) => row.contact_id));
}

/** Gives claims still held back (pending, due at once), as when the campaign pauses mid-batch. */
export async function releaseClaims(db: Db, campaignId: string, contacts: ClaimedContact[]): Promise<void> {
  if (contacts.length === 0) return;
  await sql`
    UPDATE campaign_contacts cc SET state = 'pending', claimed_until = NULL, updated_at = clock_timestamp()
    FROM unnest(${contacts.map((c) => c.contact_id)}::uuid[], ${contacts.map((c) => c.claim)}::timestamptz[])
      AS held (contact_id, claim)
    WHERE cc.campaign_id = ${campaignId} AND cc.contact_id = held.contact_id
      AND cc.state = 'calling' AND cc.claimed_until = held.claim`.execute(db);
}

/** Marks claimed contacts skipped: their numbers are on the do-not-call list at dial time. */
export async function skipSuppressed(db: Db, campaignId: string, contacts: ClaimedContact[]): Promise<void> {
  if (contacts.length === 0) return;
  await sql`
    UPDATE campaign_contacts cc SET state = 'skipped', skip_reason = 'suppressed', claimed_until = NULL,
      updated_at = clock_timestamp()
    FROM unnest(${contacts.map((c) => c.contact_id)}::uuid[], ${contacts.map((c) => c.claim)}::timestamptz[])
      AS held (contact_id, claim)
    WHERE cc.campaign_id = ${campaignId} AND cc.contact_id = held.contact_id AND cc.state = 'calling'
      AND cc.claimed_until = held.claim`.execute(db);
}

/**
 * Settles an attempt the provider refused (no call exists): ended `failed` with reason provider_error,
 * retried when the campaign retries that ending and attempts remain; the contact names its previous call
 * again.
 */
export async function settleRefusedAttempt(
  db: Db,
  campaignId: string,
  contactId: string,
  attempt: number,
  now: Date,
): Promise<void> {
  await sql`
    WITH refused AS (
      SELECT cc.ctid AS row_id, k.retry_interval_sec,
             'failed' = ANY(k.retry_on) AND 'provider_error' = ANY(k.retry_failed_reasons)
               AND ${attempt} < k.max_attempts AS retry
      FROM campaign_contacts cc JOIN campaigns k ON k.id = cc.campaign_id
      WHERE cc.campaign_id = ${campaignId} AND cc.contact_id = ${contactId}
        AND cc.state = 'calling' AND cc.attempts = ${attempt}
      FOR UPDATE OF cc
    )
    UPDATE campaign_contacts cc SET
      state = CASE WHEN r.retry THEN 'pending' ELSE 'failed' END,
      next_attempt_at = CASE WHEN r.retry THEN ${now}::timestamptz + make_interval(secs => r.retry_interval_sec) END,
      last_call_id = cc.previous_call_id, last_outcome = 'failed', last_reason = 'provider_error',
      updated_at = clock_timestamp()
    FROM refused r
    WHERE cc.ctid = r.row_id`.execute(db);
}

/**
 * Whether an ended attempt is tried again: its call (`c`) ended in an ending its campaign (`k`) retries,
 * and the contact (`cc`) has attempts left.
 */
const RETRIED = sql`cc.attempts < k.max_attempts AND (
  (c.status IN ('busy', 'no_answer') AND c.status = ANY(k.retry_on))
  OR (c.status = 'failed' AND 'failed' = ANY(k.retry_on) AND c.reason = ANY(k.retry_failed_reasons)))`;

/**
 * A settled contact (`cc`) takes its call's ending (`e`), or goes back to pending, due an interval after
 * the end, when that ending is retried.
 */
const SETTLED = sql`
  state = CASE WHEN e.retry THEN 'pending' ELSE e.status END,
  next_attempt_at = CASE WHEN e.retry THEN e.ended_at + make_interval(secs => e.retry_interval_sec) END,
  last_outcome = e.status, last_reason = e.reason, updated_at = clock_timestamp()`;

/**
 * Settles the campaign's attempts whose calls have ended: each contact being called whose last call
 * ended takes that ending, or is retried. A contact another transaction holds is left to it. Returns
 * how many were settled.
 */
export async function settleEndedAttempts(db: Db, campaignId: string): Promise<number> {
  const result = await sql`
    WITH ended AS (
      SELECT cc.ctid AS row_id, c.status, c.reason, c.ended_at, k.retry_interval_sec, ${RETRIED} AS retry
      FROM campaign_contacts cc
      JOIN campaigns k ON k.id = cc.campaign_id
      JOIN calls c ON c.id = cc.last_call_id AND c.org_id = cc.org_id
      WHERE cc.campaign_id = ${campaignId} AND cc.state = 'calling' AND cc.claimed_until IS NULL
        AND c.status = ANY(${CALL_ENDINGS}::text[])
      FOR UPDATE OF cc SKIP LOCKED
    )
    UPDATE campaign_contacts cc SET ${SETTLED}
    FROM ended e
    WHERE cc.ctid = e.row_id`.execute(db);
  return Number(result.numAffectedRows);
}

/**
 * The settlement of the contacts whose current attempts are some ended calls, prepared (every progress
 * batch that ends campaign calls runs it). Statistics taken before the campaign dialed may count its
 * contacts or its calls as none, and the planner then walked all of one or the other per batch (most of
 * a second under the generic plan), so no step leaves it that choice: the calls are read by their ids
 * alone (nothing lets an index of campaign calls serve); each contact is locked by its primary key from
 * its call, in a lateral lookup fenced off by OFFSET 0, and its state is tested on the locked row; the
 * update reaches the row by the address the lock returned.
 */
const settleCallsAttempts = prepareQuery(
  (_db, arg: Arg<{ callIds: readonly string[] }>) =>
    sql`
    WITH ended_calls AS MATERIALIZED (
      SELECT id, org_id, campaign_id, campaign_contact_id, status, reason, ended_at FROM calls
      WHERE id = ANY(${arg('callIds')}::uuid[]) AND status = ANY(${CALL_ENDINGS}::text[])
    ), ended AS (
      SELECT cc.row_id, c.status, c.reason, c.ended_at, k.retry_interval_sec, ${RETRIED} AS retry
      FROM ended_calls c
      CROSS JOIN LATERAL (
        SELECT cc.ctid AS row_id, cc.attempts, cc.state, cc.claimed_until FROM campaign_contacts cc
        WHERE cc.campaign_id = c.campaign_id AND cc.contact_id = c.campaign_contact_id
          AND cc.last_call_id = c.id AND cc.org_id = c.org_id
        OFFSET 0
        FOR UPDATE SKIP LOCKED
      ) AS cc
      JOIN campaigns k ON k.id = c.campaign_id
      WHERE cc.state = 'calling' AND cc.claimed_until IS NULL
    )
    UPDATE campaign_contacts cc SET ${SETTLED}
    FROM ended e
    WHERE cc.ctid = e.row_id`,
);

/**
 * Settles the attempts of `callIds`, campaign calls ended in this transaction, as settleEndedAttempts
 * does; a contact whose current attempt is another call is left to the campaign's next pass. Returns how
 * many were settled.
 */
export async function settleAttemptsOfCalls(db: Db, callIds: readonly string[]): Promise<number> {
  if (callIds.length === 0) return 0;
  const result = await settleCallsAttempts.run(db, { callIds });
  return Number(result.numAffectedRows);
}

/**
 * Gives back what a dead or stopped dispatcher left: claims past `now` that never became a placement,
 * and, unless `findLost` is false, attempts whose placement came to nothing (voided: never dialed), which
 * do not count as attempts and leave the contact naming its previous call. The second looks up every
 * contact being called, so busy passes skip it. Returns how many contacts are due again.
 */
export async function recoverAbandonedAttempts(
  db: Db,
  campaignId: string,
  now: Date,
  findLost = true,
): Promise<number> {
  const lapsed = await sql`
    UPDATE campaign_contacts SET state = 'pending', claimed_until = NULL, updated_at = clock_timestamp()
    WHERE campaign_id = ${campaignId} AND state = 'calling' AND claimed_until < ${now}`.execute(db);
  if (!findLost) return Number(lapsed.numAffectedRows);
  // Each attempt found lost is given back only while the contact still names that placement: a pass
  // running beside this one may have given it back and recorded a new attempt meanwhile, and a row
  // changed under this statement is checked again against its new version (not against the snapshot
  // the lost attempt was found in, where the new placement would be missing). MATERIALIZED: inlined,
  // the lost attempts were joined back to the contacts by a walk of every contact being called for each
  // one, quadratic in the contacts being called.
  const lost = await sql`
    WITH lost AS MATERIALIZED (
      SELECT cc.contact_id, cc.last_call_id FROM campaign_contacts cc
      WHERE cc.campaign_id = ${campaignId} AND cc.state = 'calling' AND cc.claimed_until IS NULL
        AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.id = cc.last_call_id)
        AND NOT EXISTS (SELECT 1 FROM call_placements p WHERE p.id = cc.last_call_id)
    )
    UPDATE campaign_contacts cc SET state = 'pending', attempts = cc.attempts - 1, last_call_id = cc.previous_call_id,
      updated_at = clock_timestamp()
    FROM lost
    WHERE cc.campaign_id = ${campaignId} AND cc.contact_id = lost.contact_id
      AND cc.last_call_id = lost.last_call_id AND cc.state = 'calling' AND cc.claimed_until IS NULL`.execute(db);
  return Number(lapsed.numAffectedRows) + Number(lost.numAffectedRows);
}

/** Ends every pending contact of the campaign as `expired` (its end time has passed); returns how many. */
export async function expirePending(db: Db, campaignId: string): Promise<number> {
  const result = await sql`
    UPDATE campaign_contacts SET state = 'expired', next_attempt_at = NULL, updated_at = clock_timestamp()
    WHERE campaign_id = ${campaignId} AND state = 'pending'`.execute(db);
  return Number(result.numAffectedRows);
}

/**
 * Whether any contact is pending, whether one is due now (a first attempt), and the earliest retry
 * time: two walks of the due index, each stopped at its first entry, never a count (a campaign may have
 * 100,000 contacts pending). A pending contact either has no attempt time (due now) or has one, so
 * "any" follows from the two. Each walk is a scalar subquery ordered as the index is, so that no
 * statistics make it a scan: an EXISTS (whose ORDER BY PostgreSQL drops) was answered with a scan of the
 * table past every contact already called, and a min() with an aggregate over every pending contact
 * while the statistics predated the campaign.
 */
export async function pendingSummary(
  db: Db,
  campaignId: string,
): Promise<{ any: boolean; dueNow: boolean; earliestRetry: Date | null }> {
  const { rows } = await sql<{ due_now: boolean; earliest: Date | null }>`
    SELECT (SELECT true FROM campaign_contacts
            WHERE campaign_id = ${campaignId} AND state = 'pending' AND next_attempt_at IS NULL
            ORDER BY next_attempt_at, position LIMIT 1) IS NOT NULL AS due_now,
           (SELECT next_attempt_at FROM campaign_contacts
            WHERE campaign_id = ${campaignId} AND state = 'pending' AND next_attempt_at IS NOT NULL
            ORDER BY next_attempt_at, position LIMIT 1) AS earliest`.execute(db);
  const row = rows[0]!;
  return { any: row.due_now || row.earliest !== null, dueNow: row.due_now, earliestRetry: row.earliest };
}

/** Sets the campaign's status and pause reason. */
export async function setCampaignStatus(
  db: Db,
  campaignId: string,
  status: DispatchCampaign['status'],
  pausedReason: 'requested' | 'insufficient_credits' | null,
): Promise<void> {
  await sql`
    UPDATE campaigns SET status = ${status}, paused_reason = ${pausedReason}, updated_at = clock_timestamp()
    WHERE id = ${campaignId}`.execute(db);
}

/** Stamps the campaign finished at `at` (its final event is emitted in the same transaction). */
export async function markFinished(db: Db, campaignId: string, at: Date): Promise<void> {
  await sql`UPDATE campaigns SET finished_at = ${at}, updated_at = clock_timestamp() WHERE id = ${campaignId}`.execute(
    db,
  );
}

/**
 * The campaigns that may have work at `now`: scheduled or running; canceled and not yet reported; or
 * paused with attempts still to settle, or past its end (which completes it).
 */
export async function activeCampaignIds(db: Db, now: Date): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    SELECT id FROM campaigns WHERE status IN ('scheduled', 'running')
    UNION ALL
    SELECT id FROM campaigns WHERE status IN ('paused', 'canceled') AND finished_at IS NULL
      AND (status = 'canceled' OR ends_at <= ${now}
           OR EXISTS (SELECT 1 FROM campaign_contacts cc
                      WHERE cc.campaign_id = campaigns.id AND cc.state = 'calling'))`.execute(db);
  return rows.map((row) => row.id);
}
