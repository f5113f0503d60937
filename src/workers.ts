// Background work of the worker role: call progress of the simulator, webhook delivery, and the job
// engine's jobs (reconciliation with the providers, the retention job, the clean-up after webhook
// endpoint switch-offs and deletions, campaign dispatch).
import type { AppDeps } from './app-deps.js';
import type { BackgroundWorker } from './background-worker.js';
import { startCallProgressWorker } from './calls/progress-worker.js';
import { startDeliveryWorker } from './webhooks/delivery/worker.js';
import { scheduleRetention } from './maintenance/retention.js';
import { scheduleEndpointCleanup } from './webhooks/endpoint-cleanup.js';
import { startCampaignDispatcher } from './campaigns/dispatch/worker.js';
import { scheduleReconciliation } from './calls/reconcile-job.js';

export type { BackgroundWorker } from './background-worker.js';

/** Starts every background worker, and registers this process's jobs with the job engine. */
export function startWorkers(deps: AppDeps): Promise<BackgroundWorker[]> {
  // Registration waits out a database outage in the background; it never rejects.
  void scheduleReconciliation(deps);
  void scheduleRetention(deps);
  void scheduleEndpointCleanup(deps);
  void startCampaignDispatcher(deps);
  const jobs: BackgroundWorker = { stop: (timeoutMs) => deps.jobs.stop(timeoutMs) };
  return Promise.resolve([startCallProgressWorker(deps), startDeliveryWorker(deps), jobs]);
}
