// Inbound provider webhooks: verified by their provider before anything in them is read, each report
// stored once and applied through the lifecycle in one short transaction, then acknowledged. A report
// for a call nobody knows is acknowledged and logged (a provider retrying it would get nowhere).
import type { AppDeps } from '../app-deps.js';
import { DomainError } from '../errors.js';
import type { InboundWebhook } from './provider/types.js';
import { ingestReports, logUnknownCall, type ReportResult } from './provider-events.js';
import { nextLookAt } from './reconcile.js';
import { scheduleCall } from './lifecycle.js';
import { isTerminal } from './status.js';

/**
 * Receives one webhook for the provider named `name`; returns each report's result. Throws DomainError
 * not_found for a provider this service does not have configured, unauthorized when the provider does
 * not vouch for the request (nothing stored).
 */
export async function receiveProviderWebhook(
  deps: AppDeps,
  name: string,
  webhook: InboundWebhook,
): Promise<ReportResult[]> {
  const provider = deps.providers.get(name);
  if (!provider) throw new DomainError('not_found', `No voice provider named ${name} is configured on this service.`);
  const reading = await provider.readWebhook(webhook);
  if (!reading.verified) {
    deps.metrics.providerWebhooks.inc({ provider: name, result: 'refused_signature' });
    deps.logger.warn(
      { provider: name, why: reading.why },
      'a provider webhook was refused: its signature does not hold',
    );
    throw new DomainError('unauthorized', 'The request is not signed by the provider, or its signature has expired.');
  }
  const { now } = webhook;
  const { results, moves } = await deps.db.transaction().execute(async (trx) => {
    const ingested = await ingestReports(trx, provider, reading.events, { now, cause: null, cutAtDeadline: false });
    // News from the provider: the call is next looked up only once it goes quiet again (or at its deadline).
    for (const move of ingested.moves) {
      if (!isTerminal(move.call.status))
        await scheduleCall(trx, move.call, nextLookAt(deps, provider, move.call, null, now));
    }
    return ingested;
  });
  for (const [index, result] of results.entries()) {
    deps.metrics.providerWebhooks.inc({ provider: name, result });
    if (result === 'unknown_call') logUnknownCall(deps.logger, name, reading.events[index]!);
  }
  for (const move of moves) {
    if (move.from !== move.call.status) deps.metrics.callStatusChanges.inc({ from: move.from, to: move.call.status });
  }
  return results;
}
