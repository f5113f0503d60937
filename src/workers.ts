// Background work that runs beside the HTTP server: call progress and webhook delivery.
import type { AppDeps } from './app-deps.js';
import type { BackgroundWorker } from './background-worker.js';
import { startCallProgressWorker } from './calls/progress-worker.js';
import { startDeliveryWorker } from './webhooks/delivery/worker.js';

export type { BackgroundWorker } from './background-worker.js';

/** Starts every background worker; resource issues register theirs here. */
export async function startWorkers(deps: AppDeps): Promise<BackgroundWorker[]> {
  return [startCallProgressWorker(deps), startDeliveryWorker(deps)];
}
