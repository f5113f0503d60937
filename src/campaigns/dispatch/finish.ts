// The end of a campaign: once it is completed or canceled and none of its contacts is still being
// called, it is stamped finished and `campaign.finished` is emitted with its final counters, once, in
// the same transaction (the campaign's row lock, held by the caller, keeps a second pass out).
import type { Db } from '../../database/connect.js';
import { emitEvent } from '../../webhooks/outbox.js';
import { campaignCounters } from '../queries.js';
import { toCampaign } from '../mapper.js';
import { markFinished, type DispatchCampaign } from './queries.js';

/** Stamps the locked, settled campaign finished at `now` and emits campaign.finished (see the header). */
export async function finishCampaign(trx: Db, campaign: DispatchCampaign, now: Date): Promise<void> {
  await markFinished(trx, campaign.id, now);
  const counters = (await campaignCounters(trx, [campaign.id])).get(campaign.id);
  if (!counters) throw new Error(`campaign ${campaign.id} has no counters`);
  const { live_org_id: _liveOrgId, ...row } = campaign;
  await emitEvent(
    trx,
    campaign.org_id,
    'campaign.finished',
    toCampaign({ ...row, finished_at: now, paused_reason: null }, counters),
    null,
  );
}
