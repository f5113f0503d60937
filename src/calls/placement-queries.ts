// SQL for call_placements: placements between their two transactions, their recovery schedule, and
// their recording as calls.
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../database/connect.js';
import { prepareQuery, type Arg } from '../database/prepared-query.js';
import { takeQuietHold } from '../orgs/credits.js';
import type { AgentsTable, CallPlacementsTable, SuppressionsTable } from '../../db/schema.js';
import type { CallRow, NewCall } from './queries.js';
import { providerCallLockKeys } from './provider-event-queries.js';

/** A placement as stored. */
export type PlacementRow = Selectable<CallPlacementsTable>;
/** A new placement; JSON columns are given as values. */
export type NewPlacement = Omit<Insertable<CallPlacementsTable>, 'metadata' | 'provider_settings'> & {
  metadata: PlacementRow['metadata'];
  provider_settings: PlacementRow['provider_settings'];
};

// A prepared statement names its columns (never `*`): a column a later migration adds to agents then
// changes nothing for an instance still running this release (see database/named-statements.ts).
const AGENT_COLUMNS = [
  'agents.id',
  'agents.org_id',
  'agents.name',
  'agents.language',
  'agents.max_duration_sec',
  'agents.from_e164',
  'agents.rate_paise_per_minute',
  'agents.provider',
  'agents.provider_settings',
  'agents.created_at',
] as const satisfies readonly `agents.${keyof Selectable<AgentsTable>}`[];

/** What a placement checks before it takes the org's row lock, read in one statement. */
export type PlacementFacts = Selectable<AgentsTable> & {
  /** Whether the placing org has an active plan now. */
  org_plan_active: boolean;
  /** The placing org's plan's cap on calls in progress, or null for none. */
  org_call_cap: number | null;
  /** The number's entry on the placing org's do-not-call list, or null. */
  suppression_reason: SuppressionsTable['reason'] | null;
  /** The placing org's own caller id, or null. */
  org_default_from_e164: string | null;
};

/**
 * The agent (of `accountOrgId`) with what the placing org's checks need: its plan and the plan's cap,
 * the number's do-not-call entry and its caller id. Undefined when the agent is not that org's.
 */
export async function findPlacementFacts(
  db: Db,
  args: { accountOrgId: string; orgId: string; agentId: string; toE164: string },
): Promise<PlacementFacts | undefined> {
  return (await placementFacts.execute(db, args))[0];
}

const placementFacts = prepareQuery(
  (db, arg: Arg<{ accountOrgId: string; orgId: string; agentId: string; toE164: string }>) =>
    db
      .selectFrom('agents')
      .select(AGENT_COLUMNS)
      .select((eb) => [
        eb
          .exists(
            eb
              .selectFrom('orgs')
              .innerJoin('plans', 'plans.id', 'orgs.plan_id')
              .select('plans.id')
              .where('orgs.id', '=', arg('orgId'))
              .where('plans.active', '=', true),
          )
          .$castTo<boolean>()
          .as('org_plan_active'),
        eb
          .selectFrom('orgs')
          .innerJoin('plans', 'plans.id', 'orgs.plan_id')
          .select('plans.max_concurrent_calls')
          .where('orgs.id', '=', arg('orgId'))
          .as('org_call_cap'),
        eb
          .selectFrom('suppressions')
          .select('suppressions.reason')
          .where('suppressions.org_id', '=', arg('orgId'))
          .where('suppressions.phone_e164', '=', arg('toE164'))
          .as('suppression_reason'),
        eb
          .selectFrom('orgs')
          .select('orgs.default_from_e164')
          .where('orgs.id', '=', arg('orgId'))
          .as('org_default_from_e164'),
      ])
      .where('agents.id', '=', arg('agentId'))
      .where('agents.org_id', '=', arg('accountOrgId')),
);

/** Stores a placement. */
export async function insertPlacement(db: Db, placement: NewPlacement): Promise<void> {
  await insertPlacements(db, [placement]);
}

/** Stores placements in one statement. */
export async function insertPlacements(db: Db, placements: NewPlacement[]): Promise<void> {
  if (placements.length === 0) return;
  await db
    .insertInto('call_placements')
    .values(
      placements.map((placement) => ({
        ...placement,
        metadata: JSON.stringify(placement.metadata),
        provider_settings: JSON.stringify(placement.provider_settings),
      })),
    )
    .execute();
}

// Every column of a placement, named for the prepared statement below: a column the table gains must be
// added here, or this stops compiling.
const PLACEMENT_COLUMN_SET = {
  id: true,
  org_id: true,
  agent_id: true,
  state: true,
  provider: true,
  provider_settings: true,
  from_e164: true,
  to_e164: true,
  language: true,
  max_duration_sec: true,
  rate_paise_per_minute: true,
  hold_paise: true,
  metadata: true,
  idempotency_key: true,
  created_at: true,
  recover_at: true,
  campaign_id: true,
  campaign_contact_id: true,
  campaign_attempt: true,
} as const satisfies Record<keyof PlacementRow, true>;
const PLACEMENT_COLUMNS = Object.keys(PLACEMENT_COLUMN_SET) as Array<keyof typeof PLACEMENT_COLUMN_SET>;

/**
 * Stores a placement and takes its hold from the org's balance in one statement (no transaction, so the
 * org's row is locked only while it runs), when the hold fits and owes no balance.low notice (see
 * takeQuietHold). False, writing nothing, otherwise.
 */
export async function insertPlacementWithQuietHold(db: Db, placement: PlacementRow): Promise<boolean> {
  const stored = await placementWithQuietHold.execute(db, {
    orgId: placement.org_id,
    holdPaise: placement.hold_paise,
    placement: JSON.stringify(placement),
  });
  return stored.length > 0;
}

const placementWithQuietHold = prepareQuery((db, arg: Arg<{ orgId: string; holdPaise: number; placement: string }>) =>
  db
    .with('hold', (qc) => takeQuietHold(qc, arg('orgId'), arg('holdPaise')))
    .insertInto('call_placements')
    .columns(PLACEMENT_COLUMNS)
    .expression((eb) =>
      eb
        .selectFrom([
          'hold',
          sql<PlacementRow>`jsonb_populate_record(NULL::call_placements, ${arg('placement')}::jsonb)`.as('stored'),
        ])
        .select(PLACEMENT_COLUMNS.map((column) => `stored.${column}` as const)),
    )
    .returning('call_placements.id'),
);

/** Locks and returns the placement with this id, or undefined once it has become a call or nothing. */
export async function lockPlacement(db: Db, id: string): Promise<PlacementRow | undefined> {
  return db.selectFrom('call_placements').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Removes the placement with this id (it becomes a call, or comes to nothing) and returns it, its row
 * locked until the transaction ends; undefined when it is already gone.
 */
export async function takePlacement(db: Db, id: string): Promise<PlacementRow | undefined> {
  return db.deleteFrom('call_placements').where('id', '=', id).returningAll().executeTakeFirst();
}

/** Marks a placement whose provider never answered; it is looked up at `recoverAt`. */
export async function markPlacementUnknown(db: Db, id: string, recoverAt: Date): Promise<void> {
  await db
    .updateTable('call_placements')
    .set({ state: 'unknown', recover_at: recoverAt })
    .where('id', '=', id)
    .execute();
}

/**
 * Takes the placement most overdue for recovery by `now`, skipping rows others hold, and moves its
 * recovery to `leaseUntil` (so a process that dies mid-recovery leaves it to another): one statement.
 */
export async function claimDuePlacement(db: Db, now: Date, leaseUntil: Date): Promise<PlacementRow | undefined> {
  return db
    .updateTable('call_placements')
    .set({ recover_at: leaseUntil })
    .where('id', '=', (eb) =>
      eb
        .selectFrom('call_placements')
        .select('id')
        .where('recover_at', '<=', now)
        .orderBy('recover_at')
        .limit(1)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Moves a placement's recovery to `at`. */
export async function schedulePlacementRecovery(db: Db, id: string, at: Date): Promise<void> {
  await db.updateTable('call_placements').set({ recover_at: at }).where('id', '=', id).execute();
}

/** Whether the org's placement made with Idempotency-Key `key` is waiting for reconciliation (its provider never answered). */
export async function isKeyPlacementUnknown(db: Db, orgId: string, key: string): Promise<boolean> {
  const row = await db
    .selectFrom('call_placements')
    .select('id')
    .where('org_id', '=', orgId)
    .where('idempotency_key', '=', key)
    .where('state', '=', 'unknown')
    .executeTakeFirst();
  return row !== undefined;
}

/** What record_placed_calls refuses with, alone, when reports wait for one of its calls. */
const REPORTS_WAITING = 'VCRW1';

/**
 * Removes the placements still there and inserts `calls` for them, each with its first timeline entry and
 * its hold in the ledger, after the provider call ids' locks (db/functions/record_placed_calls.sql): one
 * round trip. Returns the calls inserted (none for a placement already gone). With `alone`, for a
 * statement outside any transaction, it also moves the queued counters, or returns null, having written
 * nothing, when reports wait for any of the calls.
 */
export async function insertPlacedCalls(
  db: Db,
  provider: string,
  calls: readonly NewCall[],
  alone: boolean,
): Promise<CallRow[] | null> {
  if (calls.length === 0) return [];
  const lockKeys = providerCallLockKeys(
    provider,
    calls.flatMap((call) => (call.provider_call_id ? [call.provider_call_id] : [])),
  );
  try {
    const { rows } = await sql<CallRow>`SELECT * FROM record_placed_calls(
      ${lockKeys}::text[], ${provider}, ${JSON.stringify(calls)}::jsonb, ${alone})`.execute(db);
    return rows;
  } catch (error) {
    if (alone && (error as { code?: unknown }).code === REPORTS_WAITING) return null;
    throw error;
  }
}
