// The clean-up after a switch-off or a deletion, done after the answer in bounded batches: a switch-off
// only records a cut (dropped_before_seq) and a deletion only a mark, both at once whatever the
// backlog; here the dropped deliveries are marked abandoned, and a deleted endpoint's deliveries are
// deleted before its row. Started by the request that made the change, and finished by a periodic job
// (scheduleEndpointCleanup, on the job engine) when that process stopped first.
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { walkInBatches } from '../database/batches.js';
import { abandonDroppedDeliveries, deleteDeliveriesOfDeletedWebhook } from './delivery-queries.js';
import { ENDPOINT_CLEANUP_BATCH, ENDPOINT_CLEANUP_EVERY_MS, ENDPOINT_CLEANUP_SWEEP } from './policy.js';
import { findEndpointsWithDroppedDeliveries, findUnfinishedDeletions, removeDeletedWebhook } from './queries.js';

/** Marks the endpoint's dropped deliveries abandoned, a batch per statement; returns how many. */
export async function abandonDropped(db: Db, webhookId: string): Promise<number> {
  return walkInBatches((afterSeq) => abandonDroppedDeliveries(db, webhookId, afterSeq, ENDPOINT_CLEANUP_BATCH));
}

/**
 * Finishes the deletion of a marked endpoint none of whose deliveries is out on lease: its deliveries
 * (and their attempts) a batch per statement, then its row. Returns how many deliveries went.
 */
export async function removeDeleted(db: Db, webhookId: string): Promise<number> {
  const deleted = await walkInBatches((afterSeq) =>
    deleteDeliveriesOfDeletedWebhook(db, webhookId, afterSeq, ENDPOINT_CLEANUP_BATCH),
  );
  await removeDeletedWebhook(db, webhookId);
  return deleted;
}

/**
 * Runs `work` after the answer, logging a failure (the clean-up job finishes what it left). Returns
 * its promise, which never rejects.
 */
export function cleanUpAfterAnswer(
  deps: Pick<AppDeps, 'logger'>,
  webhookId: string,
  work: () => Promise<number>,
): Promise<void> {
  return work().then(
    (count) => deps.logger.debug({ webhookId, count }, 'cleaned up after a webhook endpoint switch-off or deletion'),
    (error: unknown) =>
      deps.logger.warn(
        { err: error, webhookId },
        'could not clean up after a webhook endpoint switch-off or deletion; the clean-up job finishes it',
      ),
  );
}

/**
 * One sweep: marks abandoned what switch-offs dropped, and finishes deletions that began before
 * `deletedBefore` (their sends have all ended by then) and were left unfinished. Returns the
 * deliveries abandoned and the endpoints removed; database errors propagate.
 */
export async function sweepEndpointCleanup(
  db: Db,
  deletedBefore: Date,
): Promise<{ abandoned: number; removed: number }> {
  let abandoned = 0;
  for (const id of await findEndpointsWithDroppedDeliveries(db, ENDPOINT_CLEANUP_SWEEP)) {
    abandoned += await abandonDropped(db, id);
  }
  const deletions = await findUnfinishedDeletions(db, deletedBefore, ENDPOINT_CLEANUP_SWEEP);
  for (const id of deletions) await removeDeleted(db, id);
  return { abandoned, removed: deletions.length };
}

/**
 * Schedules the sweep on the job engine (the worker role), once every ENDPOINT_CLEANUP_EVERY_MS across
 * the worker processes; resolves once it is registered. Never rejects: a failed sweep is logged, and the
 * next one finishes its work.
 */
export function scheduleEndpointCleanup(
  deps: Pick<AppDeps, 'db' | 'clock' | 'logger' | 'delivery' | 'jobs'>,
): Promise<void> {
  return deps.jobs.every('webhooks.endpoint-cleanup', ENDPOINT_CLEANUP_EVERY_MS, async () => {
    // A deletion this old has no send left in flight: every lease taken before it has lapsed.
    const before = new Date(deps.clock.now().getTime() - deps.delivery.leaseMs);
    const done = await sweepEndpointCleanup(deps.db, before);
    if (done.abandoned > 0 || done.removed > 0) {
      deps.logger.info(done, 'finished the clean-up after webhook endpoint switch-offs and deletions');
    }
  });
}
