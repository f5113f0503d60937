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
    .select(['plans.id', 'plans.name', 'plans.rate_limit_per_minute', 'plans.active'])
    .select((eb) => eb.fn.count<number>('orgs.id').as('orgs'))
    .groupBy('plans.id')
    .orderBy('plans.rate_limit_per_minute')
    .orderBy('plans.id')
    .execute();
}

/** Inserts a plan and returns its row; undefined when a plan with this id exists already. */
export async function insertPlan(db: Db, plan: { id: string; name: string; rateLimitPerMinute: number }) {
  return db
    .insertInto('plans')
    .values({ id: plan.id, name: plan.name, rate_limit_per_minute: plan.rateLimitPerMinute, active: true })
    .onConflict((oc) => oc.column('id').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** Changes the given fields of a plan and returns its row; undefined when there is no such plan. */
export async function updatePlan(
  db: Db,
  planId: string,
  changes: { name?: string; rateLimitPerMinute?: number; active?: boolean },
) {
  return db
    .updateTable('plans')
    .set({ name: changes.name, rate_limit_per_minute: changes.rateLimitPerMinute, active: changes.active })
    .where('id', '=', planId)
    .returningAll()
    .executeTakeFirst();
}

/** Every live org with its plan id, balance and creation time, newest first. */
export async function listOrgs(db: Db) {
  return db
    .selectFrom('orgs')
    .select(['id', 'name', 'plan_id', 'balance_paise', 'default_from_e164', 'created_at'])
    .where('live_org_id', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id')
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

/**
 * Moves an org's balance by `amount` and appends the matching ledger row, atomically. A debit that
 * would take the balance below zero changes nothing and returns null; otherwise returns the new balance.
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
): Promise<number | null> {
  const updated = await db
    .updateTable('orgs')
    .set({ balance_paise: sql`balance_paise + ${entry.amountPaise}` })
    .where('id', '=', entry.orgId)
    .where(sql<boolean>`balance_paise + ${entry.amountPaise} >= 0`)
    .returning('balance_paise')
    .executeTakeFirst();
  if (!updated) return null;
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
  return updated.balance_paise;
}

/**
 * Sets the test twin `orgId`'s balance to `balancePaise` and appends a `reset` ledger row for the
 * difference; returns the new balance, or null when `orgId` is not a test twin. Holds outstanding at
 * the time come back on top of it when their calls end.
 */
export async function resetTestBalance(db: Db, orgId: string, balancePaise: number): Promise<number | null> {
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
 * Moves an org's balance by `amountPaise` without a ledger row (a placement's hold, reserved until the
 * provider answers); a debit below zero changes nothing and returns false.
 */
export async function shiftBalance(db: Db, orgId: string, amountPaise: number): Promise<boolean> {
  const updated = await db
    .updateTable('orgs')
    .set({ balance_paise: sql`balance_paise + ${amountPaise}` })
    .where('id', '=', orgId)
    .where(sql<boolean>`balance_paise + ${amountPaise} >= 0`)
    .returning('id')
    .executeTakeFirst();
  return updated !== undefined;
}

/** Appends a ledger row for a balance change already made (see shiftBalance). */
export async function appendLedgerRow(
  db: Db,
  entry: { orgId: string; amountPaise: number; kind: CreditLedgerTable['kind']; callId: string },
): Promise<void> {
  await db
    .insertInto('credit_ledger')
    .values({ org_id: entry.orgId, amount_paise: entry.amountPaise, kind: entry.kind, call_id: entry.callId })
    .execute();
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
