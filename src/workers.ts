// Background work of the worker role: call progress, webhook delivery and the retention job.
import type { AppDeps } from './app-deps.js';
import type { BackgroundWorker } from './background-worker.js';
import { startCallProgressWorker } from './calls/progress-worker.js';
import { startDeliveryWorker } from './webhooks/delivery/worker.js';
import { startRetentionWorker } from './maintenance/retention.js';

export type { BackgroundWorker } from './background-worker.js';

/** Starts every background worker. */
export function startWorkers(deps: AppDeps): Promise<BackgroundWorker[]> {
  return Promise.resolve([startCallProgressWorker(deps), startDeliveryWorker(deps), startRetentionWorker(deps)]);
}
