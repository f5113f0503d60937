// Background work that runs beside the HTTP server: call progress and webhook delivery.
import type { AppDeps } from './app-deps.js';
import { startCallProgressWorker } from './services/call-worker.js';
import { startDeliveryWorker } from './events/worker.js';

/** A running background loop that can be stopped, finishing in-flight work within the bound. */
export interface BackgroundWorker {
  stop(timeoutMs: number): Promise<void>;
}

/** Starts every background worker; resource issues register theirs here. */
export async function startWorkers(deps: AppDeps): Promise<BackgroundWorker[]> {
  return [startCallProgressWorker(deps), startDeliveryWorker(deps)];
}
