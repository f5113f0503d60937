// One dispatch pass over a campaign: settles attempts whose calls ended, gives back what a dead
// dispatcher left, moves the campaign's status (started, expired, completed, finished with its event),
// claims due contacts within the campaign's concurrency while a window is open, and places them as
// ordinary calls. Returns when the campaign next needs a pass. Passes of one campaign may overlap (a
// dispatcher thought dead); the campaign's row lock and the attempt's compare-and-set keep every rule.
import type { AppDeps } from '../../app-deps.js';
import { DomainError } from '../../errors.js';
import { placeCampaignCall } from '../../calls/placement.js';
import { isDialable, nextDialableAt, type CampaignSchedule } from '../schedule.js';
import { finishCampaign } from './finish.js';
import {
  claimDueContacts,
  countCalling,
  expirePending,
  pendingSummary,
  readCampaign,
  recordAttempt,
  recoverAbandonedAttempts,
  releaseClaims,
  setCampaignStatus,
  settleEndedAttempts,
  settleRefusedAttempt,
  skipSuppressed,
  type ClaimedContact,
  type DispatchCampaign,
} from './queries.js';
import { BUSY_PASS_MS, CLAIM_BATCH, CLAIM_LEASE_MS, HALT_WAIT_MS, PLACEMENT_LANES } from './policy.js';

/** What a pass did and when the campaign needs the next one (null: not until something wakes it). */
export interface PassResult {
  placed: number;
  nextAt: Date | null;
}

/** Why placing stopped early: the org ran out of credits, hit its call cap, or cannot place at all now. */
export type Halt = 'insufficient_credits' | 'call_cap' | 'cannot_place';

/** Thrown inside a placement's first transaction when the contact's claim is no longer ours. */
class ClaimLost extends Error {}

/** The campaign's schedule in the shape the schedule module reads. */
function scheduleOf(campaign: DispatchCampaign): CampaignSchedule {
  return {
    startsAt: campaign.starts_at,
    endsAt: campaign.ends_at,
    timezone: campaign.timezone,
    windows: campaign.windows,
  };
}

/** Runs one pass over the campaign; see the file's header. Database errors propagate. */
export async function runDispatchPass(deps: AppDeps, campaignId: string): Promise<PassResult> {
  const now = deps.clock.now();
  await settleEndedAttempts(deps.db, campaignId);
  await recoverAbandonedAttempts(deps.db, campaignId, now);

  const step = await deps.db.transaction().execute(async (trx) => {
    const campaign = await readCampaign(trx, campaignId, true);
    if (!campaign || campaign.finished_at !== null) return null;
    let status = campaign.status;
    if (status === 'scheduled' && now >= campaign.starts_at) status = 'running';
    const ended = campaign.ends_at !== null && now >= campaign.ends_at;
    if (ended && status !== 'canceled' && status !== 'completed') await expirePending(trx, campaignId);
    const calling = await countCalling(trx, campaignId);
    const pending = await pendingSummary(trx, campaignId);
    // Done once nothing is left to call and nothing is being called (a retry may still come back).
    const settled = pending.pending === 0 && calling === 0;
    if (settled && (status === 'running' || (ended && status !== 'canceled'))) status = 'completed';
    if (status !== campaign.status) {
      await setCampaignStatus(trx, campaignId, status, status === 'paused' ? campaign.paused_reason : null);
    }
    if (calling === 0 && (status === 'completed' || status === 'canceled')) {
      await finishCampaign(trx, { ...campaign, status }, now);
      return null;
    }
    let claimed: ClaimedContact[] = [];
    if (status === 'running' && isDialable(scheduleOf(campaign), now)) {
      const free = Math.min(campaign.max_concurrency - calling, CLAIM_BATCH);
      if (free > 0) {
        const claim = await claimDueContacts(
          trx,
          { id: campaignId, excludedConsent: campaign.exclude_consent_capture },
          free,
          now,
          new Date(now.getTime() + CLAIM_LEASE_MS),
        );
        claimed = claim.claimed;
      }
    }
    return { campaign: { ...campaign, status }, calling, pending, claimed };
  });
  if (step === null) return { placed: 0, nextAt: null };

  const { campaign, claimed } = step;
  const { placed, halt } = await placeClaimed(deps, campaign, claimed);
  if (halt === 'insufficient_credits') {
    await deps.db.transaction().execute(async (trx) => {
      const current = await readCampaign(trx, campaignId, true);
      if (current?.status === 'running') await setCampaignStatus(trx, campaignId, 'paused', 'insufficient_credits');
    });
    deps.logger.info({ campaignId }, 'a campaign paused: its org lacks the credits for the next call');
  }
  if (claimed.length > 0 || step.calling > 0) {
    return { placed, nextAt: new Date(now.getTime() + (halt === null ? BUSY_PASS_MS : HALT_WAIT_MS[halt])) };
  }
  return { placed, nextAt: nextPassAt(campaign, step.pending, now) };
}

/** When an idle campaign (nothing being called) next has something to do, or null for never by itself. */
function nextPassAt(
  campaign: DispatchCampaign,
  pending: { pending: number; dueNow: boolean; earliestRetry: Date | null },
  now: Date,
): Date | null {
  if (campaign.status === 'paused' || campaign.status === 'canceled' || campaign.status === 'completed') return null;
  const schedule = scheduleOf(campaign);
  let due = campaign.starts_at > now ? campaign.starts_at : now;
  if (!pending.dueNow && pending.earliestRetry !== null && pending.earliestRetry > due) due = pending.earliestRetry;
  // No window opens before the end: the next pass is at the end, which expires what is left.
  return nextDialableAt(schedule, due) ?? campaign.ends_at;
}

/** Places the claimed contacts, a few at a time; stops early (giving unplaced claims back) on a halt. */
async function placeClaimed(
  deps: AppDeps,
  campaign: DispatchCampaign,
  claimed: ClaimedContact[],
): Promise<{ placed: number; halt: Halt | null }> {
  const queue = [...claimed];
  let placed = 0;
  let halt: Halt | null = null;
  const failures: Error[] = [];
  const lane = async () => {
    while (halt === null && failures.length === 0) {
      const contact = queue.shift();
      if (!contact) return;
      try {
        const outcome = await placeOne(deps, campaign, contact);
        if (outcome === 'placed') placed += 1;
        else if (outcome !== 'skipped') halt = outcome;
      } catch (error) {
        failures.push(error instanceof Error ? error : new Error(String(error)));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(PLACEMENT_LANES, queue.length) }, lane));
  // Claims not placed (a halt, or a database error) are due again at once rather than at their lapse.
  await releaseClaims(deps.db, campaign.id, queue);
  if (failures[0]) throw failures[0];
  return { placed, halt };
}

/**
 * Places one claimed contact's attempt as a call of the campaign's org and mode. Returns 'placed',
 * 'skipped' (suppressed, refused by the provider, claim lost, or its outcome still being checked) or
 * the reason placing must stop; the contact's claim is given back on a halt.
 */
async function placeOne(
  deps: AppDeps,
  campaign: DispatchCampaign,
  contact: ClaimedContact,
): Promise<'placed' | 'skipped' | Halt> {
  let recorded = false;
  try {
    await placeCampaignCall(
      deps,
      {
        auth: {
          orgId: campaign.org_id,
          accountOrgId: campaign.live_org_id ?? campaign.org_id,
          livemode: campaign.live_org_id === null,
        },
        body: { agent_id: campaign.agent_id, to_e164: contact.phone_e164, metadata: campaign.metadata },
        idempotencyKey: undefined,
        campaign: { campaignId: campaign.id, contactId: contact.contact_id, attempt: contact.attempt },
      },
      async (trx, callId) => {
        if (!(await recordAttempt(trx, campaign.id, contact, callId))) throw new ClaimLost();
        recorded = true;
      },
    );
    return 'placed';
  } catch (error) {
    if (error instanceof ClaimLost) return 'skipped';
    if (!(error instanceof DomainError)) throw error;
    return settleRefusal(deps, campaign, contact, error, recorded);
  }
}

/** What a refused placement means for the contact and the pass; see placeOne. */
async function settleRefusal(
  deps: AppDeps,
  campaign: DispatchCampaign,
  contact: ClaimedContact,
  error: DomainError,
  recorded: boolean,
): Promise<'skipped' | Halt> {
  const give = () => releaseClaims(deps.db, campaign.id, [contact]);
  if (error.code === 'forbidden' && error.param === 'to_e164') {
    await skipSuppressed(deps.db, campaign.id, contact);
    return 'skipped';
  }
  if (error.code === 'insufficient_credits' || error.code === 'too_many_requests') {
    await give();
    return error.code === 'insufficient_credits' ? 'insufficient_credits' : 'call_cap';
  }
  if (recorded && error.code === 'upstream_error') {
    await settleRefusedAttempt(deps.db, campaign.id, contact.contact_id, contact.attempt, deps.clock.now());
    return 'skipped';
  }
  // The provider's answer never came: the placement is reconciled and the attempt settles from it.
  if (recorded && error.code === 'service_unavailable') return 'skipped';
  await give();
  deps.logger.warn(
    { campaignId: campaign.id, code: error.code, err: error },
    'a campaign cannot place calls now; it tries again later',
  );
  return 'cannot_place';
}
