// One dispatch pass over a campaign: settles attempts whose calls ended, gives back what a dead
// dispatcher left, moves the campaign's status (started, expired, completed, finished with its event),
// claims due contacts within the campaign's concurrency while a window is open, and places them as
// ordinary calls. Returns when the campaign next needs a pass. Passes of one campaign may overlap (a
// dispatcher thought dead); the campaign's row lock and the attempt's compare-and-set keep every rule.
import type { AppDeps } from '../../app-deps.js';
import { DomainError } from '../../errors.js';
import { askProvider, reserveCampaignPlacements, type BatchedReservation } from '../../calls/placement.js';
import { recorderFor } from '../../calls/placement-recorder.js';
import type { VoiceProvider } from '../../calls/provider/types.js';
import { isDialable, nextDialableAt, type CampaignSchedule } from '../schedule.js';
import { cancelPendingContacts } from '../queries.js';
import { finishCampaign } from './finish.js';
import {
  claimDueContacts,
  countCalling,
  expirePending,
  pendingSummary,
  readCampaign,
  recordAttempts,
  recoverAbandonedAttempts,
  releaseClaims,
  setCampaignStatus,
  settleEndedAttempts,
  settleRefusedAttempt,
  skipSuppressed,
  type ClaimedContact,
  type DispatchCampaign,
} from './queries.js';
import { BUSY_PASS_MS, CLAIM_BATCH, CLAIM_LEASE_MS, HALT_WAIT_MS, PLACEMENT_BATCH, PLACEMENT_LANES } from './policy.js';

/** What a pass did and when the campaign needs the next one (null: not until something wakes it). */
export interface PassResult {
  placed: number;
  nextAt: Date | null;
}

/** Why placing stopped early: the org ran out of credits, hit its call cap, or cannot place at all now. */
export type Halt = 'insufficient_credits' | 'call_cap' | 'cannot_place';

/** The campaign's schedule in the shape the schedule module reads. */
function scheduleOf(campaign: DispatchCampaign): CampaignSchedule {
  return {
    startsAt: campaign.starts_at,
    endsAt: campaign.ends_at,
    timezone: campaign.timezone,
    windows: campaign.windows,
  };
}

/**
 * Runs one pass over the campaign; see the file's header. With `findLost` false the pass does not look
 * for attempts whose placement was voided (a job looks once, on its first pass). Database errors propagate.
 */
export async function runDispatchPass(deps: AppDeps, campaignId: string, findLost = true): Promise<PassResult> {
  const now = deps.clock.now();
  await settleEndedAttempts(deps.db, campaignId);
  await recoverAbandonedAttempts(deps.db, campaignId, now, findLost);

  const step = await deps.db.transaction().execute(async (trx) => {
    const campaign = await readCampaign(trx, campaignId, true);
    if (!campaign || campaign.finished_at !== null) return null;
    let status = campaign.status;
    if (status === 'scheduled' && now >= campaign.starts_at) status = 'running';
    // Counted before pending contacts are expired or canceled: an attempt settles back to pending (a
    // retry) outside this transaction, so one settled after them would be counted neither as being
    // called nor as ended, and a canceled campaign would finish with it pending. Once no contact is
    // being called, none can come back.
    const calling = await countCalling(trx, campaignId);
    const ended = campaign.ends_at !== null && now >= campaign.ends_at;
    if (ended && status !== 'canceled' && status !== 'completed') await expirePending(trx, campaignId);
    // A canceled campaign calls no one again: an attempt that came back for a retry ends canceled.
    if (status === 'canceled') await cancelPendingContacts(trx, campaignId);
    const pending = await pendingSummary(trx, campaignId);
    // Done once nothing is left to call and nothing is being called (a retry may still come back).
    const settled = !pending.any && calling === 0;
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

/**
 * When an idle campaign (nothing being called) next has something to do: its start, its next window (or
 * due retry inside one), or its end; null for never by itself (a paused campaign without an end).
 */
function nextPassAt(
  campaign: DispatchCampaign,
  pending: { any: boolean; dueNow: boolean; earliestRetry: Date | null },
  now: Date,
): Date | null {
  if (campaign.status === 'canceled' || campaign.status === 'completed') return null;
  // A paused campaign dials nothing, but its end still expires what is left and completes it.
  if (campaign.status === 'paused') return campaign.ends_at;
  // A scheduled campaign is running from its start, whether or not a window is open then.
  if (campaign.status === 'scheduled' && campaign.starts_at > now) return campaign.starts_at;
  const schedule = scheduleOf(campaign);
  let due = campaign.starts_at > now ? campaign.starts_at : now;
  if (!pending.dueNow && pending.earliestRetry !== null && pending.earliestRetry > due) due = pending.earliestRetry;
  // No window opens before the end: the next pass is at the end, which expires what is left.
  return nextDialableAt(schedule, due) ?? campaign.ends_at;
}

/** A placement reserved by a batch's first transaction. */
type PlacementRow = Extract<BatchedReservation, { outcome: 'reserved' }>['placement'];

/** A halt's reason when a batch's attempt was refused for it, else null. */
function haltOf(reservation: BatchedReservation): Halt | null {
  if (reservation.outcome === 'call_cap') return 'call_cap';
  if (reservation.outcome === 'insufficient_credits') return 'insufficient_credits';
  return null;
}

/**
 * Places the claimed contacts: batches of PLACEMENT_BATCH go through the placement's first transaction
 * one after another (each under one org row lock), and their placements are asked of the provider by
 * PLACEMENT_LANES lanes meanwhile. Stops reserving on a halt; claims not reserved are given back.
 */
async function placeClaimed(
  deps: AppDeps,
  campaign: DispatchCampaign,
  claimed: ClaimedContact[],
): Promise<{ placed: number; halt: Halt | null }> {
  const dialQueue: Array<{ contact: ClaimedContact; placement: PlacementRow; provider: VoiceProvider }> = [];
  let placed = 0;
  const counted = (outcome: string, contacts = 1) => deps.metrics.campaignPlacements.inc({ outcome }, contacts);
  let halt: Halt | null = null;
  let failure: unknown = null;
  let reserving = true;
  const idle: Array<() => void> = [];
  const waitForWork = () => new Promise<void>((resolve) => idle.push(resolve));
  const wakeAll = () => {
    for (const resolve of idle.splice(0)) resolve();
  };
  const lane = async () => {
    while (failure === null) {
      const next = dialQueue.shift();
      if (!next) {
        if (!reserving) return;
        await waitForWork();
        continue;
      }
      try {
        if ((await dialOne(deps, campaign, next.contact, next.placement, next.provider)) === 'placed') placed += 1;
      } catch (error) {
        failure = error;
      }
    }
  };
  const lanes = Array.from({ length: Math.min(PLACEMENT_LANES, claimed.length) }, lane);
  const unreserved: ClaimedContact[] = [];
  let start = 0;
  try {
    for (; start < claimed.length; start += PLACEMENT_BATCH) {
      const batch = claimed.slice(start, start + PLACEMENT_BATCH);
      if (halt !== null || failure !== null) {
        if (failure === null) counted(halt!, batch.length);
        unreserved.push(...batch);
        continue;
      }
      const reserved = await reserveBatch(deps, campaign, batch);
      if ('halt' in reserved) {
        halt = reserved.halt;
        counted(halt, batch.length);
        unreserved.push(...batch);
        continue;
      }
      const suppressed: ClaimedContact[] = [];
      for (const [index, reservation] of reserved.reservations.entries()) {
        const contact = batch[index]!;
        if (reservation.outcome === 'reserved') {
          dialQueue.push({ contact, placement: reservation.placement, provider: reserved.provider! });
        } else if (reservation.outcome === 'suppressed') {
          counted('suppressed');
          suppressed.push(contact);
        } else if (reservation.outcome !== 'not_recorded') {
          halt ??= haltOf(reservation);
          counted(reservation.outcome);
          unreserved.push(contact);
        }
      }
      wakeAll();
      await skipSuppressed(deps.db, campaign.id, suppressed);
    }
  } catch (error) {
    failure ??= error;
    // The batch that failed wrote nothing (its transaction rolled back): it and the rest are given back.
    unreserved.push(...claimed.slice(start));
  } finally {
    reserving = false;
    wakeAll();
  }
  await Promise.all(lanes);
  // Claims not reserved (a halt, or a database error) are due again at once rather than at their lapse.
  await releaseClaims(deps.db, campaign.id, unreserved);
  if (failure !== null) throw failure instanceof Error ? failure : new Error('placing failed', { cause: failure });
  return { placed, halt };
}

/**
 * A batch's first transaction (see reserveCampaignPlacements), its attempts recorded in it. A refusal of
 * the whole batch (no plan, the agent gone, its provider not configured) halts placing as cannot_place.
 */
async function reserveBatch(
  deps: AppDeps,
  campaign: DispatchCampaign,
  batch: ClaimedContact[],
): Promise<{ provider: VoiceProvider | null; reservations: BatchedReservation[] } | { halt: Halt }> {
  const byContact = new Map(batch.map((contact) => [contact.contact_id, contact]));
  try {
    return await reserveCampaignPlacements(
      deps,
      {
        auth: {
          orgId: campaign.org_id,
          accountOrgId: campaign.live_org_id ?? campaign.org_id,
          livemode: campaign.live_org_id === null,
        },
        agentId: campaign.agent_id,
        metadata: campaign.metadata,
        attempts: batch.map((contact) => ({
          campaignId: campaign.id,
          contactId: contact.contact_id,
          attempt: contact.attempt,
          toE164: contact.phone_e164,
        })),
      },
      (trx, attempts) =>
        recordAttempts(
          trx,
          campaign.id,
          attempts.map(({ attempt, callId }) => ({ contact: byContact.get(attempt.contactId)!, callId })),
        ),
    );
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    deps.logger.warn(
      { campaignId: campaign.id, code: error.code, err: error },
      'a campaign cannot place calls now; it tries again later',
    );
    return { halt: 'cannot_place' };
  }
}

/**
 * Asks the provider for one reserved placement and settles it as placeCall does (its call recorded in
 * groups with the process's other placements, the other lanes' included). Returns 'placed', or 'skipped'
 * when the provider refused it (the attempt ends failed, or is retried) or its outcome is still being
 * checked (the attempt settles from the reconciled call). Database errors propagate.
 */
async function dialOne(
  deps: AppDeps,
  campaign: DispatchCampaign,
  contact: ClaimedContact,
  placement: PlacementRow,
  provider: VoiceProvider,
): Promise<'placed' | 'skipped'> {
  try {
    const call = await recorderFor(deps, provider).record(placement, await askProvider(deps, placement, provider));
    deps.metrics.campaignPlacements.inc({ outcome: call ? 'placed' : 'unknown' });
    return call ? 'placed' : 'skipped';
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const refused = error.code === 'upstream_error';
    deps.metrics.campaignPlacements.inc({ outcome: refused ? 'refused' : 'unknown' });
    if (refused) {
      await settleRefusedAttempt(deps.db, campaign.id, contact.contact_id, contact.attempt, deps.clock.now());
    }
    return 'skipped';
  }
}
