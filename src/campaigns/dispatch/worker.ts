// The campaign dispatcher on the job engine: each campaign with work has one keyed job
// (`campaigns.dispatch`) that runs its passes and queues its successor for when the campaign next needs
// one; a periodic sweep (`campaigns.sweep`) queues a job for every campaign that may have work and has
// none waiting, so nothing is lost when a process dies. Jobs of one campaign never run side by side.
import type { AppDeps } from '../../app-deps.js';
import { activeCampaignIds } from './queries.js';
import { runDispatchPass } from './pass.js';
import { DISPATCH_JOBS_AT_ONCE, JOB_BUDGET_MS, SLEEP_WITHIN_JOB_MS } from './policy.js';

/** The real time at which the clock of `deps` reads `at` (tests run on a clock of their own). */
function realTimeOf(deps: Pick<AppDeps, 'clock'>, at: Date): Date {
  return new Date(Date.now() + Math.max(0, at.getTime() - deps.clock.now().getTime()));
}

/**
 * Asks for a pass over the campaign now, moving its waiting job (if any) to now. Called after a change
 * that gives a campaign work (created, resumed, canceled). Never throws: when the job cannot be queued
 * the failure is logged and the periodic sweep queues it within CAMPAIGN_SWEEP_INTERVAL_MS.
 */
export async function wakeCampaign(deps: Pick<AppDeps, 'jobs' | 'logger'>, campaignId: string): Promise<void> {
  try {
    await deps.jobs.send('campaigns.dispatch', { campaignId }, { key: campaignId, replace: true });
  } catch (error) {
    deps.logger.warn({ campaignId, err: error }, 'a campaign could not be woken; the sweep will queue it');
  }
}

/**
 * Runs the campaign's passes for up to JOB_BUDGET_MS, sleeping between them while the next is near
 * (only the first looks for voided attempts: one look per job), then queues its successor at the time
 * the last pass asked for (none once the campaign needs nothing).
 */
export async function dispatchCampaign(deps: AppDeps, campaignId: string, signal: AbortSignal): Promise<void> {
  const started = performance.now();
  for (let pass = 0; ; pass += 1) {
    const { nextAt } = await runDispatchPass(deps, campaignId, pass === 0);
    if (nextAt === null) return;
    const waitMs = nextAt.getTime() - deps.clock.now().getTime();
    const withinBudget = performance.now() - started + waitMs < JOB_BUDGET_MS;
    if (signal.aborted || !withinBudget || waitMs > SLEEP_WITHIN_JOB_MS) {
      await deps.jobs.send('campaigns.dispatch', { campaignId }, { key: campaignId, runAt: realTimeOf(deps, nextAt) });
      return;
    }
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}

/** Queues a pass for every campaign that may have work and has no job waiting. */
export async function sweepCampaigns(deps: AppDeps): Promise<void> {
  for (const campaignId of await activeCampaignIds(deps.db, deps.clock.now())) {
    await deps.jobs.send('campaigns.dispatch', { campaignId }, { key: campaignId });
  }
}

/** Starts the dispatcher's work in this (worker) process. */
export async function startCampaignDispatcher(deps: AppDeps): Promise<void> {
  await deps.jobs.work('campaigns.dispatch', (data, run) => dispatchCampaign(deps, data.campaignId, run.signal), {
    concurrency: DISPATCH_JOBS_AT_ONCE,
  });
  await deps.jobs.every('campaigns.sweep', deps.config.campaignSweepIntervalMs, () => sweepCampaigns(deps));
}
