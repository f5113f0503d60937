// SQL for call rows: org-scoped reads and pages, row locks, guarded status updates, due-call claims.
import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Db } from '../database/connect.js';
import { prepareQuery, type Arg } from '../database/prepared-query.js';
import type { CallsTable } from '../../db/schema.js';
import { callTotal, campaignCallTotal } from './status-count-queries.js';
import { preparedPageWithTotal, type PageStart } from '../database/keyset.js';

/** A call as stored. */
export type CallRow = Selectable<CallsTable>;
/** A call row without its transcript, as lists return it. */
export type CallListRow = Omit<CallRow, 'transcript'>;
type CallStatus = CallsTable['status'];

/** A new call; JSON columns are given as values. */
export type NewCall = Omit<Insertable<CallsTable>, 'metadata' | 'transcript'> & { metadata: CallRow['metadata'] };
/** Changes to a call; JSON columns are given as values. */
export type CallChanges = Omit<Updateable<CallsTable>, 'metadata' | 'transcript'> & {
  transcript?: CallRow['transcript'];
};

const LIST_COLUMNS = [
  'id',
  'org_id',
  'agent_id',
  'status',
  'from_e164',
  'to_e164',
  'language',
  'max_duration_sec',
  'rate_paise_per_minute',
  'hold_paise',
  'metadata',
  'provider',
  'provider_call_id',
  'progress_cursor',
  'next_step_at',
  'duration_sec',
  'credits_debited_paise',
  'recording_url',
  'llm_extracted_intent',
  'llm_sentiment',
  'llm_outcome',
  'reason',
  'started_at',
  'ended_at',
  'created_at',
  'campaign_id',
  'campaign_contact_id',
  'campaign_attempt',
] as const satisfies readonly (keyof CallListRow)[];

// Prepared statements name their columns (never `*`): a column a later migration adds then changes
// nothing for an instance still running the previous release (see database/named-statements.ts).
const CALL_COLUMNS = [...LIST_COLUMNS, 'transcript'] as const satisfies readonly (keyof CallRow)[];

/** The org's call with this id, or undefined (also for another org's call). */
export async function findCall(db: Db, orgId: string, id: string): Promise<CallRow | undefined> {
  return (await callById.execute(db, { id, orgId }))[0];
}

const callById = prepareQuery((db, arg: Arg<{ id: string; orgId: string }>) =>
  db.selectFrom('calls').select(CALL_COLUMNS).where('id', '=', arg('id')).where('org_id', '=', arg('orgId')),
);

/** Like findCall, and locks the row until the transaction ends. */
export async function lockCall(db: Db, orgId: string, id: string): Promise<CallRow | undefined> {
  return db
    .selectFrom('calls')
    .selectAll()
    .where('id', '=', id)
    .where('org_id', '=', orgId)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Locks in `trx` up to `limit` calls most overdue for a step by `now`, of `providers` (not empty),
 * skipping rows others hold; only the call `id`, when given. Returns them in id order.
 */
export async function lockDueCalls(
  trx: Db,
  due: { now: Date; limit: number; providers: readonly string[]; id?: string },
): Promise<CallRow[]> {
  const { now, limit, providers, id } = due;
  const query = trx
    .selectFrom('calls')
    .selectAll()
    .where('next_step_at', 'is not', null)
    .where('next_step_at', '<=', now)
    .where('provider', 'in', providers);
  const locked = await (id === undefined ? query : query.where('id', '=', id))
    .orderBy('next_step_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
  return locked.sort((a, b) => a.id.localeCompare(b.id));
}

/** The most overdue call of one of `providers` due for a step by `now`, read without a lock. */
export async function mostOverdueCall(
  db: Db,
  now: Date,
  providers: readonly string[],
): Promise<{ id: string; provider: string } | undefined> {
  return db
    .selectFrom('calls')
    .select(['id', 'provider'])
    .where('next_step_at', 'is not', null)
    .where('next_step_at', '<=', now)
    .where('provider', 'in', providers)
    .orderBy('next_step_at')
    .limit(1)
    .executeTakeFirst();
}

/**
 * Takes the most overdue call due by `now` whose provider is not one of `localProviders` and that no one
 * holds, and moves its next step to `leaseUntil` (so a process that dies mid-step leaves it to another):
 * one statement, no lock kept.
 */
export async function claimDueCall(
  db: Db,
  claim: { now: Date; leaseUntil: Date; localProviders: readonly string[] },
): Promise<CallRow | undefined> {
  const { now, leaseUntil, localProviders } = claim;
  return db
    .updateTable('calls')
    .set({ next_step_at: leaseUntil })
    .where('id', '=', (eb) => {
      const due = eb
        .selectFrom('calls')
        .select('id')
        .where('next_step_at', 'is not', null)
        .where('next_step_at', '<=', now);
      return (localProviders.length > 0 ? due.where('provider', 'not in', localProviders) : due)
        .orderBy('next_step_at')
        .limit(1)
        .forUpdate()
        .skipLocked();
    })
    .returningAll()
    .executeTakeFirst();
}

/** Locks and returns the call of `provider` with our id `callId` or its id `providerCallId`, if any. */
export async function lockProviderCall(
  db: Db,
  provider: string,
  ids: { callId: string | null; providerCallId: string | null },
): Promise<CallRow | undefined> {
  const { callId, providerCallId } = ids;
  return db
    .selectFrom('calls')
    .selectAll()
    .where('provider', '=', provider)
    .where((eb) =>
      eb.or([
        ...(callId !== null ? [eb('id', '=', callId)] : []),
        ...(providerCallId !== null ? [eb('provider_call_id', '=', providerCallId)] : []),
      ]),
    )
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
}

/** Applies `changes` only while the call is still in status `expected`; undefined when it is not. */
export async function updateCallInStatus(
  db: Db,
  id: string,
  expected: CallStatus,
  changes: CallChanges,
): Promise<CallRow | undefined> {
  const { transcript, ...rest } = changes;
  return db
    .updateTable('calls')
    .set(
      transcript === undefined
        ? rest
        : { ...rest, transcript: transcript === null ? null : JSON.stringify(transcript) },
    )
    .where('id', '=', id)
    .where('status', '=', expected)
    .returningAll()
    .executeTakeFirst();
}

/** A locked call's row as a batch of changes left it, the columns they changed, and its status before them. */
export interface CallRowWrite {
  expected: CallStatus;
  row: CallRow;
  columns: ReadonlySet<keyof CallChanges>;
}

/**
 * Writes the rows of calls this transaction holds locked, as `writes` say they now stand, in one
 * statement: each of the columns any of them changed is set from its row (a row that did not change it
 * keeps its value), each only while the call is still in its `expected` status. Throws, having changed
 * nothing that stays, when one is not.
 */
export async function writeCallRows(db: Db, writes: readonly CallRowWrite[]): Promise<void> {
  if (writes.length === 0) return;
  const columns = [...new Set(writes.flatMap((write) => [...write.columns]))].sort();
  const assignments = sql.join(columns.map((column) => sql`${sql.ref(column)} = given.${sql.ref(column)}`));
  // Each row with only its id and the columns set, so a call's metadata and transcript are not sent again.
  const keys: Array<keyof CallRow> = ['id', ...columns];
  const given = writes.map(({ row }) => Object.fromEntries(keys.map((key) => [key, row[key]])));
  const { rows } = await sql<{ id: string }>`
    UPDATE calls SET ${assignments}
    FROM jsonb_populate_recordset(NULL::calls, ${JSON.stringify(given)}::jsonb) AS given
    JOIN unnest(${writes.map((write) => write.row.id)}::uuid[], ${writes.map((write) => write.expected)}::text[])
      AS expected (id, status) ON expected.id = given.id
    WHERE calls.id = given.id AND calls.status = expected.status
    RETURNING calls.id`.execute(db);
  if (rows.length !== writes.length) throw new Error('a locked call left the status its batch of changes began from');
}

/** Which calls a list holds: the org's, only those in `status` and only the campaign's when given. */
export type CallFilters = {
  orgId: string;
  status: CallStatus | undefined;
  campaignId: string | undefined;
};

/**
 * One page of the org's calls, newest first (ties by id), optionally only those in `status` and only
 * those of the campaign `campaignId` (the caller has checked it is the org's), with how many calls pass
 * the filters: one statement, so the page and the total come from the same snapshot in a single round
 * trip. The page starts after `offset` calls, or next to the call `cursor` (on its `side`; `more` then
 * tells whether calls lie beyond the page; no call passes an unknown cursor).
 */
export async function listCallsPage(
  db: Db,
  page: CallFilters & { limit: number; start: PageStart },
): Promise<{ rows: CallListRow[]; total: number; more: boolean }> {
  const { orgId, status, campaignId, limit, start } = page;
  const pages = callPageReaders.get(`${status !== undefined}/${campaignId !== undefined}`)!;
  return pages(db, { orgId, status, campaignId }, { limit, start });
}

/**
 * The reader of the org's calls with their total, filtered on `status` when `inStatus` and on the
 * campaign when `inCampaign`: a campaign's calls are read along its own indexes and counted from its
 * counters (campaignCallTotal), the org's from the org's counters (callTotal).
 */
function callPages(inStatus: boolean, inCampaign: boolean) {
  return preparedPageWithTotal((db, arg: Arg<CallFilters>) => {
    const status = inStatus ? arg('status') : undefined;
    const rows = db
      .selectFrom('calls')
      .select(LIST_COLUMNS)
      .where('org_id', '=', arg('orgId'))
      .$if(status !== undefined, (query) => query.where('status', '=', status!))
      .$if(inCampaign, (query) => query.where('campaign_id', '=', arg('campaignId')!));
    return {
      list: { rows, table: 'calls', columns: ['created_at', 'id'] },
      total: inCampaign ? campaignCallTotal(db, arg('campaignId')!, status) : callTotal(db, arg('orgId'), status),
    };
  });
}

/** Each filter combination's reader, by `${inStatus}/${inCampaign}`. */
const callPageReaders = new Map(
  [false, true].flatMap((inStatus) =>
    [false, true].map((inCampaign) => [`${inStatus}/${inCampaign}`, callPages(inStatus, inCampaign)] as const),
  ),
);
