// Orgs for the conformance check, as an operator makes them with the admin CLI: one on a plan roomy
// enough that a whole run never meets its rate limit, three made to be refused (one on a small plan, to
// exhaust; one without credits; one without a plan) and one a call takes below its low-balance
// threshold; each with an agent and a key.
import type { Db } from '../../src/database/connect.js';
import { createPlan } from '../../src/orgs/service.js';
import { createTestOrg, type TestOrg } from './app.js';

/** The rate limit of the small plan, per minute. */
export const SMALL_PLAN_LIMIT = 5;

/** A rate limit per minute far above what one conformance run sends (over 1,200 requests in its first half minute). */
const ROOMY_PLAN_LIMIT = 1_000_000;

/**
 * An org with credits on a new plan of ROOMY_PLAN_LIMIT, for the check's main key: on `scale` (1,200 a
 * minute) a run would spend much of its time waiting out its own 429s.
 */
export async function roomyOrg(db: Db): Promise<TestOrg> {
  const planId = `roomy-${Math.random().toString(36).slice(2, 8)}`;
  await createPlan(db, { id: planId, name: 'Roomy', rateLimitPerMinute: ROOMY_PLAN_LIMIT });
  return createTestOrg(db, { planId, credits: 1_000_000_000, mode: 'test' });
}

/** Keys of four new orgs, named as the conformance check's options. */
export async function refusedOrgKeys(
  db: Db,
): Promise<{ smallPlanKey: string; noCreditsKey: string; noPlanKey: string; lowBalanceKey: string }> {
  const planId = `small-${Math.random().toString(36).slice(2, 8)}`;
  await createPlan(db, { id: planId, name: 'Small', rateLimitPerMinute: SMALL_PLAN_LIMIT });
  const small = await createTestOrg(db, { planId, credits: 1_000_000, mode: 'test' });
  const poor = await createTestOrg(db, { planId: 'scale', credits: 0, mode: 'test' });
  const planless = await createTestOrg(db, { planId: null, credits: 1_000_000, mode: 'test' });
  // The test agent's call holds 2,000 paise: from 11,000 it crosses the default threshold of 10,000.
  const nearlyLow = await createTestOrg(db, { planId: 'scale', credits: 11_000, mode: 'test' });
  return { smallPlanKey: small.key, noCreditsKey: poor.key, noPlanKey: planless.key, lowBalanceKey: nearlyLow.key };
}
