// The end of a campaign: once it is completed or canceled and none of its contacts is still being
// called, it is stamped finished and `campaign.finished` is emitted with its final counters, once, in
// the same transaction (the campaign's row lock, held by the caller, keeps a second pass out).
import type { Db } from '../../database/connect.js';
import { emitEvent } from '../../webhooks/outbox.js';
import { campaignCounters, findCampaignRow } from '../queries.js';
import { toCampaign } from '../mapper.js';
import { markFinished, type DispatchCampaign } from './queries.js';

/** Stamps the locked, settled campaign finished at `now` and emits campaign.finished (see the header). */
export async function finishCampaign(trx: Db, campaign: DispatchCampaign, now: Date): Promise<void> {
  await markFinished(trx, campaign.id, now);
  // Read again, so the event carries the campaign exactly as GET /campaigns/{id} now shows it.
  const row = await findCampaignRow(trx, campaign.org_id, campaign.id);
  const counters = (await campaignCounters(trx, [campaign.id])).get(campaign.id);
  if (!row || !counters) throw new Error(`campaign ${campaign.id} is gone or has no counters`);
  await emitEvent(trx, campaign.org_id, 'campaign.finished', toCampaign(row, counters), null);
}
