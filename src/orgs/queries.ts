// SQL for orgs, plans, agents and the credit ledger.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';
import type { CreditLedgerTable } from '../../db/schema.js';

/** Inserts an org and returns its row. Throws on an unknown plan id (foreign key). */
export async function insertOrg(db: Db, org: { name: string; planId: string | null; defaultFromE164: string | null }) {
  return db
    .insertInto('orgs')
    .values({ name: org.name, plan_id: org.planId, default_from_e164: org.defaultFromE164 })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** How many orgs there are (test twins not counted). */
export async function countOrgs(db: Db): Promise<number> {
  const row = await db
    .selectFrom('orgs')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('live_org_id', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** An org by id (live or a test twin), or undefined. */
export async function findOrg(db: Db, orgId: string) {
  return db.selectFrom('orgs').selectAll().where('id', '=', orgId).executeTakeFirst();
}

/** A live org by id, or undefined (also for a test twin's id). */
export async function findLiveOrg(db: Db, orgId: string) {
  return db.selectFrom('orgs').selectAll().where('id', '=', orgId).where('live_org_id', 'is', null).executeTakeFirst();
}

/** The id of the live org's test twin, or undefined for an unknown or test org. */
export async function findTestTwinId(db: Db, liveOrgId: string): Promise<string | undefined> {
  const row = await db.selectFrom('orgs').select('id').where('live_org_id', '=', liveOrgId).executeTakeFirst();
  return row?.id;
}

/** The org with its plan's name, rate limit and state (null fields when it has no plan). */
export async function findOrgWithPlan(db: Db, orgId: string) {
  return db
    .selectFrom('orgs')
    .leftJoin('plans', 'plans.id', 'orgs.plan_id')
    .select([
      'orgs.id',
      'orgs.name',
      'orgs.balance_paise',
      'plans.id as plan_id',
      'plans.name as plan_name',
      'plans.rate_limit_per_minute',
      'plans.active as plan_active',
    ])
    .where('orgs.id', '=', orgId)
    .executeTakeFirst();
}

/** The org's active plan (id and rate limit), or undefined when it has none or the plan is switched off. */
export async function findActivePlanOfOrg(db: Db, orgId: string) {
  return db
    .selectFrom('orgs')
    .innerJoin('plans', 'plans.id', 'orgs.plan_id')
    .select(['plans.id', 'plans.rate_limit_per_minute'])
    .where('orgs.id', '=', orgId)
    .where('plans.active', '=', true)
    .executeTakeFirst();
}

/** A plan by id, or undefined. */
export async function findPlan(db: Db, planId: string) {
  return db.selectFrom('plans').selectAll().where('id', '=', planId).executeTakeFirst();
}

/** Every plan with how many orgs are on it, by rate limit then id. */
export async function listPlans(db: Db) {
  return db
    .selectFrom('plans')
    .leftJoin('orgs', (join) => join.onRef('orgs.plan_id', '=', 'plans.id').on('orgs.live_org_id', 'is', null))
    .select(['plans.id', 'plans.name', 'plans.rate_limit_per_minute', 'plans.active', 'plans.max_concurrent_calls'])
    .select((eb) => eb.fn.count<number>('orgs.id').as('orgs'))
    .groupBy('plans.id')
    .orderBy('plans.rate_limit_per_minute')
    .orderBy('plans.id')
    .execute();
}

/** Inserts a plan and returns its row; undefined when a plan with this id exists already. */
export async function insertPlan(
  db: Db,
  plan: { id: string; name: string; rateLimitPerMinute: number; maxConcurrentCalls: number | null },
) {
  return db
    .insertInto('plans')
    .values({
      id: plan.id,
      name: plan.name,
      rate_limit_per_minute: plan.rateLimitPerMinute,
      active: true,
      max_concurrent_calls: plan.maxConcurrentCalls,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Changes the given fields of a plan and returns its row; undefined when there is no such plan. */
export async function updatePlan(
  db: Db,
  planId: string,
  changes: { name?: string; rateLimitPerMinute?: number; active?: boolean; maxConcurrentCalls?: number | null },
) {
  return db
    .updateTable('plans')
    .set({
      name: changes.name,
      rate_limit_per_minute: changes.rateLimitPerMinute,
      active: changes.active,
      max_concurrent_calls: changes.maxConcurrentCalls,
    })
    .where('id', '=', planId)
    .returningAll()
    .executeTakeFirst();
}

/** Every live org with its plan id, live and test balances and creation time, newest first. */
export async function listOrgs(db: Db) {
  return db
    .selectFrom('orgs')
    .leftJoin('orgs as twin', 'twin.live_org_id', 'orgs.id')
    .select([
      'orgs.id',
      'orgs.name',
      'orgs.plan_id',
      'orgs.balance_paise',
      'twin.balance_paise as test_balance_paise',
      'orgs.low_balance_threshold_paise',
      'orgs.default_from_e164',
      'orgs.created_at',
    ])
    .where('orgs.live_org_id', 'is', null)
    .orderBy('orgs.created_at', 'desc')
    .orderBy('orgs.id')
    .execute();
}

/** Sets or clears an org's plan; returns false when the org does not exist. */
export async function setOrgPlan(db: Db, orgId: string, planId: string | null): Promise<boolean> {
  const result = await db.updateTable('orgs').set({ plan_id: planId }).where('id', '=', orgId).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Inserts an agent for an org and returns its row. */
export async function insertAgent(
  db: Db,
  agent: {
    orgId: string;
    name: string;
    language: string;
    maxDurationSec: number;
    fromE164: string | null;
    ratePaisePerMinute: number;
    provider: string;
    providerSettings: Record<string, string>;
  },
) {
  return db
    .insertInto('agents')
    .values({
      org_id: agent.orgId,
      name: agent.name,
      language: agent.language,
      max_duration_sec: agent.maxDurationSec,
      from_e164: agent.fromE164,
      rate_paise_per_minute: agent.ratePaisePerMinute,
      provider: agent.provider,
      provider_settings: JSON.stringify(agent.providerSettings),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Sets the org's agent's provider and its settings; returns the agent, or undefined when the org has no such agent. */
export async function updateAgentProvider(
  db: Db,
  change: { orgId: string; agentId: string; provider: string; providerSettings: Record<string, string> },
) {
  return db
    .updateTable('agents')
    .set({ provider: change.provider, provider_settings: JSON.stringify(change.providerSettings) })
    .where('id', '=', change.agentId)
    .where('org_id', '=', change.orgId)
    .returningAll()
    .executeTakeFirst();
}

/** An org's balance just after a movement, and whether that movement took it below its low-balance threshold. */
export interface BalanceMove {
  balancePaise: number;
  /** The holds of the org's calls in flight, after the movement. */
  heldPaise: number;
  thresholdPaise: number;
  /** The balance was at or above a threshold above 0 before the movement, and is below it now. */
  fellBelow: boolean;
}

/**
 * Moves an org's balance by `amountPaise` and its holds in flight by `heldPaise` in one UPDATE, which
 * holds the org's row lock until the transaction ends; null, changing nothing, when the balance would
 * go below zero. Under the lock the balance before is the balance after less the amount, so the
 * comparison with the threshold sees each crossing exactly once, however many movements run at once.
 */
async function moveBalance(db: Db, orgId: string, amountPaise: number, heldPaise: number): Promise<BalanceMove | null> {
  const row = await db
    .updateTable('orgs')
    .set({ balance_paise: sql`balance_paise + ${amountPaise}`, held_paise: sql`held_paise + ${heldPaise}` })
    .where('id', '=', orgId)
    .where(sql<boolean>`balance_paise + ${amountPaise} >= 0`)
    .returning([
      'balance_paise',
      'held_paise',
      'low_balance_threshold_paise',
      sql<boolean>`low_balance_threshold_paise > 0 AND balance_paise < low_balance_threshold_paise
        AND balance_paise - ${amountPaise} >= low_balance_threshold_paise`.as('fell_below'),
    ])
    .executeTakeFirst();
  if (!row) return null;
  return {
    balancePaise: row.balance_paise,
    heldPaise: row.held_paise,
    thresholdPaise: row.low_balance_threshold_paise,
    fellBelow: row.fell_below,
  };
}

/**
 * Moves an org's balance by `amount` and appends the matching ledger row, atomically. A debit that
 * would take the balance below zero changes nothing and returns null; otherwise returns the movement.
 * Call inside a transaction when the movement pays for another state change.
 */
export async function moveCredits(
  db: Db,
  entry: {
    orgId: string;
    amountPaise: number;
    kind: CreditLedgerTable['kind'];
    callId?: string | null;
    note?: string | null;
  },
): Promise<BalanceMove | null> {
  const moved = await moveBalance(db, entry.orgId, entry.amountPaise, 0);
  if (!moved) return null;
  await db
    .insertInto('credit_ledger')
    .values({
      org_id: entry.orgId,
      amount_paise: entry.amountPaise,
      kind: entry.kind,
      call_id: entry.callId ?? null,
      note: entry.note ?? null,
    })
    .execute();
  return moved;
}

/**
 * Sets the test twin `orgId`'s balance to `balancePaise` and appends a `reset` ledger row for the
 * difference; returns the movement, or null when `orgId` is not a test twin. Holds outstanding at
 * the time come back on top of it when their calls end.
 */
export async function resetTestBalance(db: Db, orgId: string, balancePaise: number): Promise<BalanceMove | null> {
  const before = await db
    .selectFrom('orgs')
    .select('balance_paise')
    .where('id', '=', orgId)
    .where('live_org_id', 'is not', null)
    .forUpdate()
    .executeTakeFirst();
  if (!before) return null;
  return moveCredits(db, {
    orgId,
    amountPaise: balancePaise - before.balance_paise,
    kind: 'reset',
    note: 'test balance reset',
  });
}

/**
 * Takes a placement's hold of `holdPaise` from an org's balance and counts it as held, without a ledger
 * row (it is reserved until the provider answers); null, changing nothing, when it does not fit.
 */
export async function takeHold(db: Db, orgId: string, holdPaise: number): Promise<BalanceMove | null> {
  return moveBalance(db, orgId, -holdPaise, holdPaise);
}

/** Gives a reserved hold back to the balance (no ledger row: none was written for it); null for an unknown org. */
export async function giveHoldBack(db: Db, orgId: string, holdPaise: number): Promise<BalanceMove | null> {
  return moveBalance(db, orgId, holdPaise, -holdPaise);
}

/**
 * Settles ended calls of one org in one movement: each call's hold is given back and its charge taken
 * (no more than the hold), with its ledger rows `release` and `charge` (each only when not 0). Returns
 * the movement, or null when the balance would go below zero (the ledger rows are written all the same:
 * the caller rolls back).
 */
export async function settleHolds(
  db: Db,
  orgId: string,
  calls: ReadonlyArray<{ callId: string; holdPaise: number; chargePaise: number }>,
): Promise<BalanceMove | null> {
  // The ledger rows first, so the org's row is locked for the movement only; the caller rolls both back on null.
  await appendLedgerRows(
    db,
    calls
      .flatMap(({ callId, holdPaise, chargePaise }) => [
        { orgId, amountPaise: holdPaise, kind: 'release' as const, callId },
        { orgId, amountPaise: -chargePaise, kind: 'charge' as const, callId },
      ])
      .filter((entry) => entry.amountPaise !== 0),
  );
  const held = calls.reduce((sum, call) => sum + call.holdPaise, 0);
  const charged = calls.reduce((sum, call) => sum + call.chargePaise, 0);
  return moveBalance(db, orgId, held - charged, -held);
}

/** Appends ledger rows for a balance movement made in the same transaction, in one statement. */
async function appendLedgerRows(
  db: Db,
  entries: ReadonlyArray<{ orgId: string; amountPaise: number; kind: CreditLedgerTable['kind']; callId: string }>,
): Promise<void> {
  if (entries.length === 0) return;
  await db
    .insertInto('credit_ledger')
    .values(
      entries.map((entry) => ({
        org_id: entry.orgId,
        amount_paise: entry.amountPaise,
        kind: entry.kind,
        call_id: entry.callId,
      })),
    )
    .execute();
}

/** Sets a live org's low-balance threshold (its test twin follows, by trigger); false when there is no such live org. */
export async function setLowBalanceThreshold(db: Db, orgId: string, thresholdPaise: number): Promise<boolean> {
  const result = await db
    .updateTable('orgs')
    .set({ low_balance_threshold_paise: thresholdPaise })
    .where('id', '=', orgId)
    .where('live_org_id', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The org's balance and the sum of its ledger, for consistency checks. */
export async function balanceAndLedgerSum(db: Db, orgId: string): Promise<{ balance: number; ledgerSum: number }> {
  const row = await db
    .selectFrom('orgs')
    .select([
      'balance_paise',
      (eb) =>
        eb
          .selectFrom('credit_ledger')
          .select(sql<number>`coalesce(sum(amount_paise), 0)`.as('sum'))
          .whereRef('credit_ledger.org_id', '=', 'orgs.id')
          .as('ledger_sum'),
    ])
    .where('id', '=', orgId)
    .executeTakeFirstOrThrow();
  return { balance: row.balance_paise, ledgerSum: Number(row.ledger_sum ?? 0) };
}

/** The oldest org and the id of one of its agents ('' when it has none); undefined without orgs. */
export async function firstOrgWithAgent(db: Db): Promise<{ orgId: string; agentId: string } | undefined> {
  const org = await db
    .selectFrom('orgs')
    .select('id')
    .where('live_org_id', 'is', null)
    .orderBy('created_at')
    .limit(1)
    .executeTakeFirst();
  if (!org) return undefined;
  const agent = await db.selectFrom('agents').select('id').where('org_id', '=', org.id).limit(1).executeTakeFirst();
  return { orgId: org.id, agentId: agent?.id ?? '' };
}
