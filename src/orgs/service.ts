// Operator actions on orgs, plans, agents and credits. Used by the CLI, the demo seed and tests.
// Operator inputs are refused with DomainError invalid_request (param: the option) and unknown ids with
// not_found; the CLI prints their messages.
import { unknownCursor, type PageStart } from '../contract/pagination.js';
import type { Db } from '../database/connect.js';
import { DomainError, notFound } from '../errors.js';
import { toAgent, type Agent } from './mapper.js';
import * as orgs from './queries.js';
import * as agents from './agent-queries.js';
import { orgForMode, type Mode } from './modes.js';
import {
  AGENT_MAX_DURATION_BOUNDS,
  AGENT_NAME_MAX,
  AGENT_RATE_MAX,
  DEFAULT_AGENT,
  DEFAULT_PLAN_ID,
  LOW_BALANCE_THRESHOLD_RULE,
} from './policy.js';

export { DEFAULT_FROM_E164 } from './policy.js';

function refused(param: string, message: string): DomainError {
  return new DomainError('invalid_request', message, { param });
}

function unknownOrg(orgId: string): DomainError {
  return new DomainError('not_found', `no org with id ${orgId}`, { param: 'org' });
}

function unknownPlan(planId: string): DomainError {
  return new DomainError('not_found', `no plan with id ${planId}`, { param: 'id' });
}

const E164 = /^\+[1-9][0-9]{6,14}$/;
const LANGUAGE = /^[a-z]{2}-[A-Z]{2}$/;
const PLAN_ID = /^[a-z][a-z0-9_-]{0,31}$/;
const PLAN_NAME_MAX = 100;
/** The largest rate limit the plans table stores (a PostgreSQL integer). */
const RATE_LIMIT_MAX = 2_147_483_647;

function checkPlanName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed || trimmed.length > PLAN_NAME_MAX)
    throw refused('name', `--name must be 1 to ${PLAN_NAME_MAX} characters`);
  return trimmed;
}

function checkRateLimit(rateLimitPerMinute: number): number {
  if (!Number.isInteger(rateLimitPerMinute) || rateLimitPerMinute < 1 || rateLimitPerMinute > RATE_LIMIT_MAX)
    throw refused(
      'rate-limit',
      `--rate-limit must be a whole number of requests per minute from 1 to ${RATE_LIMIT_MAX}`,
    );
  return rateLimitPerMinute;
}

/** The largest concurrency cap the plans table stores (a PostgreSQL integer). */
const CONCURRENCY_CAP_MAX = 2_147_483_647;

/** A plan's concurrency cap, or null for none; throws invalid_request (param max-concurrent-calls) below 1. */
function checkConcurrencyCap(cap: number | null): number | null {
  if (cap !== null && (!Number.isInteger(cap) || cap < 1 || cap > CONCURRENCY_CAP_MAX))
    throw refused(
      'max-concurrent-calls',
      `--max-concurrent-calls must be a whole number of calls from 1 to ${CONCURRENCY_CAP_MAX}, or none for no cap`,
    );
  return cap;
}

/** Throws invalid_request (param plan) unless the plan exists and is switched on, so an org may be put on it. */
async function checkAssignable(db: Db, planId: string): Promise<void> {
  const plan = await orgs.findPlan(db, planId);
  if (!plan) throw refused('plan', `unknown plan "${planId}"`);
  if (!plan.active) throw refused('plan', `plan "${planId}" is switched off`);
}

/** Creates an org with an opening credit balance; throws DomainError on an unknown plan or bad input. */
export async function createOrg(
  db: Db,
  input: { name: string; creditsPaise?: number; planId?: string | null; fromE164?: string | null },
) {
  if (!input.name.trim()) throw refused('name', 'name must not be empty');
  if (input.fromE164 && !E164.test(input.fromE164)) throw refused('from', '--from must be an E.164 number');
  const credits = input.creditsPaise ?? 0;
  if (!Number.isSafeInteger(credits) || credits < 0)
    throw refused('credits', 'credits must be a whole number of paise, 0 or more');
  const planId = input.planId === undefined ? DEFAULT_PLAN_ID : input.planId;
  if (planId !== null) await checkAssignable(db, planId);
  return db.transaction().execute(async (trx) => {
    const org = await orgs.insertOrg(trx, { name: input.name.trim(), planId, defaultFromE164: input.fromE164 ?? null });
    if (credits > 0)
      await orgs.moveCredits(trx, { orgId: org.id, amountPaise: credits, kind: 'top_up', note: 'opening balance' });
    return { ...org, balance_paise: credits };
  });
}

/** Creates an agent in an org; throws DomainError on an unknown org or bad input. */
export async function createAgent(
  db: Db,
  input: {
    orgId: string;
    name: string;
    language?: string;
    maxDurationSec?: number;
    fromE164?: string | null;
    ratePaisePerMinute?: number;
    /** The voice provider (default simulator) and the agent's settings for it, checked by the caller. */
    provider?: string;
    providerSettings?: Record<string, string>;
  },
) {
  if (!(await findOrgOrNull(db, input.orgId))) throw unknownOrg(input.orgId);
  const name = input.name.trim();
  if (!name || name.length > AGENT_NAME_MAX) throw refused('name', `--name must be 1 to ${AGENT_NAME_MAX} characters`);
  const language = input.language ?? DEFAULT_AGENT.language;
  if (!LANGUAGE.test(language)) throw refused('language', '--language must look like xx-XX, for example hi-IN');
  const maxDurationSec = input.maxDurationSec ?? DEFAULT_AGENT.maxDurationSec;
  const { min, max } = AGENT_MAX_DURATION_BOUNDS;
  if (!Number.isInteger(maxDurationSec) || maxDurationSec < min || maxDurationSec > max) {
    throw refused('max-duration', `--max-duration must be a whole number of seconds from ${min} to ${max}`);
  }
  if (input.fromE164 && !E164.test(input.fromE164)) throw refused('from', '--from must be an E.164 number');
  const rate = input.ratePaisePerMinute ?? DEFAULT_AGENT.ratePaisePerMinute;
  if (!Number.isInteger(rate) || rate < 0 || rate > AGENT_RATE_MAX) {
    throw refused('rate', `--rate must be a whole number of paise per minute from 0 to ${AGENT_RATE_MAX}`);
  }
  return orgs.insertAgent(db, {
    orgId: input.orgId,
    name,
    language,
    maxDurationSec,
    fromE164: input.fromE164 ?? null,
    ratePaisePerMinute: rate,
    provider: input.provider ?? 'simulator',
    providerSettings: input.providerSettings ?? {},
  });
}

/**
 * Moves an org's agent to a voice provider with its settings (checked by the caller); returns the agent.
 * Throws DomainError on an unknown org or an agent the org does not have.
 */
export async function setAgentProvider(
  db: Db,
  change: { orgId: string; agentId: string; provider: string; providerSettings: Record<string, string> },
) {
  if (!(await findOrgOrNull(db, change.orgId))) throw unknownOrg(change.orgId);
  const agent = await orgs.updateAgentProvider(db, change);
  if (!agent) throw new DomainError('not_found', `The org has no agent ${change.agentId}.`, { param: 'agent' });
  return agent;
}

/** Adds credits to an org's balance in `mode` (a top_up ledger row); returns the new balance. Throws DomainError. */
export async function addCredits(db: Db, liveOrgId: string, paise: number, mode: Mode = 'live'): Promise<number> {
  if (!Number.isSafeInteger(paise) || paise <= 0) throw refused('paise', '--paise must be a positive whole number');
  if (!(await findOrgOrNull(db, liveOrgId))) throw unknownOrg(liveOrgId);
  return db.transaction().execute(async (trx) => {
    const orgId = await orgForMode(trx, liveOrgId, mode);
    const move = await orgs.moveCredits(trx, { orgId, amountPaise: paise, kind: 'top_up', note: 'operator top-up' });
    const balance = move!.balancePaise;
    // Balances are read as JavaScript numbers: above this they would no longer be exact.
    if (balance > Number.MAX_SAFE_INTEGER) {
      throw refused(
        'paise',
        `--paise would take the balance above ${Number.MAX_SAFE_INTEGER} paise, the most it can hold`,
      );
    }
    return balance;
  });
}

/**
 * Sets a live org's low-balance threshold in paise (0 switches balance.low off); its test balance
 * follows it. Sends nothing by itself: the next fall across the new threshold does. Throws DomainError
 * invalid_request for a value that is not a whole number from 0 to the largest balance, not_found for
 * an unknown org.
 */
export async function setLowBalanceThreshold(db: Db, liveOrgId: string, paise: number): Promise<void> {
  if (!Number.isSafeInteger(paise) || paise < 0) {
    throw refused('low-balance-threshold', LOW_BALANCE_THRESHOLD_RULE);
  }
  if (!(await orgs.setLowBalanceThreshold(db, liveOrgId, paise))) throw unknownOrg(liveOrgId);
}

/**
 * Sets an org's plan, or removes it with null; throws DomainError on an unknown org, an unknown plan
 * or a plan that is switched off.
 */
export async function setPlan(db: Db, orgId: string, planId: string | null): Promise<void> {
  if (planId !== null) await checkAssignable(db, planId);
  if (!(await findOrgOrNull(db, orgId))) throw unknownOrg(orgId);
  await orgs.setOrgPlan(db, orgId, planId);
}

/**
 * Creates a plan, switched on. Throws invalid_request for an id that is not 1 to 32 lowercase letters,
 * digits, '-' or '_' starting with a letter (or is "none", which means no plan), an empty name, a
 * rate limit or concurrency cap that is not a positive whole number, or an id already taken. Without
 * `maxConcurrentCalls` the plan sets no concurrency cap.
 */
export async function createPlan(
  db: Db,
  input: { id: string; name: string; rateLimitPerMinute: number; maxConcurrentCalls?: number | null },
) {
  if (!PLAN_ID.test(input.id) || input.id === 'none') {
    throw refused(
      'id',
      '--id must be 1 to 32 lowercase letters, digits, - or _, starting with a letter, and not "none"',
    );
  }
  const plan = await orgs.insertPlan(db, {
    id: input.id,
    name: checkPlanName(input.name),
    rateLimitPerMinute: checkRateLimit(input.rateLimitPerMinute),
    maxConcurrentCalls: checkConcurrencyCap(input.maxConcurrentCalls ?? null),
  });
  if (!plan) throw refused('id', `a plan with id ${input.id} exists already`);
  return plan;
}

/**
 * Changes a plan's name, rate limit, concurrency cap (null removes it) or whether it is switched on;
 * orgs on it see a new rate limit at their next key lookup and a new cap at their next placement.
 * Throws not_found for an unknown plan and invalid_request for bad values or no change.
 */
export async function updatePlan(
  db: Db,
  planId: string,
  changes: { name?: string; rateLimitPerMinute?: number; active?: boolean; maxConcurrentCalls?: number | null },
) {
  if (Object.values(changes).every((value) => value === undefined)) {
    throw refused('id', 'nothing to change: give a new name, rate limit, concurrency cap or active state');
  }
  const plan = await orgs.updatePlan(db, planId, {
    name: changes.name === undefined ? undefined : checkPlanName(changes.name),
    rateLimitPerMinute:
      changes.rateLimitPerMinute === undefined ? undefined : checkRateLimit(changes.rateLimitPerMinute),
    active: changes.active,
    maxConcurrentCalls:
      changes.maxConcurrentCalls === undefined ? undefined : checkConcurrencyCap(changes.maxConcurrentCalls),
  });
  if (!plan) throw unknownPlan(planId);
  return plan;
}

/** Every plan with how many orgs are on it, by rate limit. */
export async function listPlans(db: Db) {
  return orgs.listPlans(db);
}

/** Every org (plan, balance, creation time), newest first. */
export async function listOrgs(db: Db) {
  return orgs.listOrgs(db);
}

/** The org's agents, newest first; throws not_found (param org) for an unknown org. */
export async function listAgents(db: Db, orgId: string) {
  await requireOrg(db, orgId);
  return agents.listAgents(db, orgId);
}

/** The org's agent with this id, or undefined (also for another org's agent). */
export async function findAgent(db: Db, orgId: string, agentId: string) {
  return agents.findAgentInOrg(db, orgId, agentId);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The live org with this id, or null (an operator names orgs by their live id, never a test twin's). */
async function findOrgOrNull(db: Db, orgId: string) {
  if (!UUID.test(orgId)) return null;
  return (await orgs.findLiveOrg(db, orgId)) ?? null;
}

/** The live org's row; throws not_found (param org) for an unknown id (or a test twin's). */
export async function requireOrg(db: Db, orgId: string) {
  const org = await findOrgOrNull(db, orgId);
  if (!org) throw unknownOrg(orgId);
  return org;
}

/** The org's row (balance, default caller id), or undefined for an unknown id. */
export async function findOrg(db: Db, orgId: string) {
  return orgs.findOrg(db, orgId);
}

/** The org with its plan (name, rate limit, state); throws not_found. */
export async function getOrgWithPlan(db: Db, orgId: string) {
  const org = await orgs.findOrgWithPlan(db, orgId);
  if (!org) throw notFound('organisation');
  return org;
}

/** Whether the org has an active plan now (read from the database, not from the key cache). */
export async function hasActivePlan(db: Db, orgId: string): Promise<boolean> {
  return (await orgs.findActivePlanOfOrg(db, orgId)) !== undefined;
}

/**
 * One page of the org's agents in API form, newest first, with the total and whether a cursor page has
 * more beyond it; a cursor naming no agent of the org is invalid_request.
 */
export async function listAgentsPage(
  db: Db,
  orgId: string,
  page: { limit: number } & PageStart,
): Promise<{ items: Agent[]; total: number; more: boolean }> {
  if ('cursor' in page && !(await agents.findAgentInOrg(db, orgId, page.cursor))) throw unknownCursor(page.side);
  const { rows, total, more } = await agents.listAgentsPage(db, orgId, page);
  return { items: rows.map(toAgent), total, more };
}

/** The org's agent in API form; throws not_found (param id) for an unknown or foreign id. */
export async function getAgent(db: Db, orgId: string, id: string): Promise<Agent> {
  const row = await agents.findAgentInOrg(db, orgId, id);
  if (!row) throw notFound('agent');
  return toAgent(row);
}

/** How many agents use each voice provider, across every org. */
export async function agentsByProvider(db: Db): Promise<Array<{ provider: string; agents: number }>> {
  return agents.countAgentsByProvider(db);
}

/** The agent when it belongs to the org, or undefined. */
export async function findAgentInOrg(db: Db, orgId: string, agentId: string) {
  return agents.findAgentInOrg(db, orgId, agentId);
}

/** How many orgs the database has (start-up says how to create the first one when there is none). */
export async function countOrgs(db: Db): Promise<number> {
  return orgs.countOrgs(db);
}

/** The oldest org and one of its agents (the demo org on an embedded database), or undefined. */
export async function firstOrgWithAgent(db: Db): Promise<{ orgId: string; agentId: string } | undefined> {
  return orgs.firstOrgWithAgent(db);
}
