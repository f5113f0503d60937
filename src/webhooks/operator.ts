// What the operator CLI does with any org's webhook endpoints: list an org's, switch one off or on,
// redeliver one delivery, and replay an endpoint's failed deliveries since a time. The rules are the
// API's (a switched-off endpoint gets nothing; one delivery of an event pending at a time); the org's
// cap on redeliveries does not apply, a replay is bounded by its own limit instead.
import { recordAudit, type AuditEntry } from '../audit/service.js';
import type { Db } from '../database/connect.js';
import { DomainError } from '../errors.js';
import * as deliveries from './delivery-queries.js';
import { toWebhook, type Webhook } from './mapper.js';
import { MAX_ENDPOINTS_PER_ORG } from './policy.js';
import * as webhooks from './queries.js';
import { systemClock } from '../clock.js';
import { waitForSendsToEnd } from './delivery/in-flight.js';
import { abandonDropped } from './endpoint-cleanup.js';
import { queueRedelivery } from './service.js';
import { notifyDeliveryWorkers } from './event-queries.js';
import { accountOf } from '../orgs/modes.js';

/** The most deliveries one replay queues. */
export const MAX_REPLAY = 1_000;

/**
 * The audit entry of an operator's change to the data of `orgId`: in its live org's log (where the
 * dashboard shows it), in the mode of the endpoint's org.
 */
async function operatorAudit(
  db: Db,
  orgId: string,
  entry: Omit<AuditEntry, 'orgId' | 'livemode'>,
): Promise<AuditEntry> {
  const { accountOrgId, livemode } = await accountOf(db, orgId);
  return { ...entry, orgId: accountOrgId, livemode };
}

function unknownEndpoint(id: string): DomainError {
  return new DomainError('not_found', `no webhook with id ${id}`, { param: 'webhook' });
}

/** The org's live endpoints, newest first (an org has at most MAX_ENDPOINTS_PER_ORG). */
export async function listOrgWebhooks(db: Db, orgId: string): Promise<Webhook[]> {
  const { rows } = await webhooks.listWebhookRows(db, orgId, { limit: MAX_ENDPOINTS_PER_ORG, offset: 0 });
  return rows.map(toWebhook);
}

/**
 * Switches the endpoint off or on (its failure streak cleared), as PATCH /webhooks/{id} does, and writes
 * it to the org's audit log as done by `actor`, in the same transaction. Switching off drops what was
 * pending, stops the sends in flight in the worker processes and waits until none is out (at most
 * `leaseMs`), then marks the dropped deliveries abandoned in batches. Returns the endpoint, its org and
 * how many deliveries were marked abandoned. Throws not_found (param webhook).
 */
export async function setWebhookActive(
  db: Db,
  id: string,
  change: { active: boolean; now: Date; actor: string; leaseMs: number },
): Promise<{ webhook: Webhook; orgId: string; abandoned: number }> {
  const { active, now, actor } = change;
  const orgId = await webhooks.findWebhookOrg(db, id);
  if (!orgId) throw unknownEndpoint(id);
  const action = active ? 'webhook.enabled' : 'webhook.disabled';
  const audit = await operatorAudit(db, orgId, { actor, action, target: id, at: now });
  const row = await db.transaction().execute(async (trx) => {
    if (!active && !(await webhooks.lockWebhookAgainstClaims(trx, orgId, id))) throw unknownEndpoint(id);
    const updated = await webhooks.updateWebhookRow(trx, orgId, id, { active, now });
    if (!updated) throw unknownEndpoint(id);
    await recordAudit(trx, audit);
    return updated;
  });
  if (active) return { webhook: toWebhook(row), orgId, abandoned: 0 };
  await webhooks.notifyEndpointStopped(db, id, 'switched_off');
  await waitForSendsToEnd(db, systemClock, id, { boundMs: change.leaseMs, pollMs: SWITCH_OFF_POLL_MS });
  return { webhook: toWebhook(row), orgId, abandoned: await abandonDropped(db, id) };
}

/** How often a switch-off looks whether the sends in flight to the endpoint have ended. */
const SWITCH_OFF_POLL_MS = 25;

const switchedOff = (id: string) =>
  new DomainError('invalid_state', `webhook ${id} is switched off; switch it on first (admin webhook enable)`);

/** The org of the endpoint, which must be on. Throws not_found (param webhook), invalid_state. */
async function requireActiveEndpoint(db: Db, id: string): Promise<string> {
  const orgId = await webhooks.findWebhookOrg(db, id);
  if (!orgId) throw unknownEndpoint(id);
  const row = await webhooks.findWebhookRow(db, orgId, id);
  if (!row?.active) throw switchedOff(id);
  return orgId;
}

/**
 * Last in a transaction that queued deliveries: share-locks the endpoint and checks it is still on, so
 * a switch-off since the first check is seen (see queueRedelivery). Throws as requireActiveEndpoint.
 */
async function requireStillOn(trx: Db, orgId: string, id: string): Promise<void> {
  const row = await webhooks.lockWebhookRow(trx, orgId, id);
  if (!row) throw unknownEndpoint(id);
  if (!row.active) throw switchedOff(id);
}

/**
 * Queues the delivery's event to its endpoint again, or finds the one already pending; a new redelivery
 * is written to the org's audit log as done by `actor`, in the same transaction. Throws not_found
 * (param delivery) for an unknown delivery, invalid_state for a switched-off endpoint.
 */
export async function redeliverAny(
  db: Db,
  deliveryId: string,
  now: Date,
  actor: string,
): Promise<{ id: string; queued: boolean }> {
  const delivery = await deliveries.findAnyDelivery(db, deliveryId);
  if (!delivery) throw new DomainError('not_found', `no delivery with id ${deliveryId}`, { param: 'delivery' });
  const orgId = await requireActiveEndpoint(db, delivery.webhook_id);
  const audit = await operatorAudit(db, orgId, { actor, action: 'webhook.redelivered', target: deliveryId, at: now });
  return db.transaction().execute(async (trx) => {
    const outcome = await queueRedelivery(trx, {
      orgId,
      webhookId: delivery.webhook_id,
      eventId: delivery.event_id,
      now,
    });
    if (outcome.queued) {
      await requireStillOn(trx, orgId, delivery.webhook_id);
      await recordAudit(trx, audit);
    }
    return outcome;
  });
}

/**
 * What a replay did: the events queued again, those whose pending delivery was waiting for a retry and
 * was made due now, and those whose pending delivery was already due (or being sent).
 */
export interface ReplayReport {
  queued: string[];
  madeDue: string[];
  alreadyPending: string[];
}

/**
 * Queues again every event whose delivery to the endpoint failed or was abandoned since `since`, and
 * makes due now those whose delivery is waiting for a retry after a failed attempt, as the dashboard's
 * "Retry now" does (oldest first, at most `limit` events, each once however many of its deliveries
 * failed); with `dryRun`, only lists them (as to be queued). The events are queued in one transaction, which also writes
 * `webhook.replayed` by `actor` to the org's audit log when any was queued: a replay happens whole
 * and audited, or not at all. Throws not_found (param webhook), invalid_state for a switched-off
 * endpoint.
 */
export async function replayDeliveries(
  db: Db,
  webhookId: string,
  options: { since: Date; limit: number; now: Date; dryRun: boolean; actor: string },
): Promise<ReplayReport> {
  const orgId = await requireActiveEndpoint(db, webhookId);
  const events = await deliveries.findUnsuccessfulEvents(db, webhookId, options.since, options.limit);
  if (options.dryRun) return { queued: events, madeDue: [], alreadyPending: [] };
  const audit = await operatorAudit(db, orgId, {
    actor: options.actor,
    action: 'webhook.replayed',
    target: webhookId,
    at: options.now,
  });
  return db.transaction().execute(async (trx) => {
    const report: ReplayReport = { queued: [], madeDue: [], alreadyPending: [] };
    for (const eventId of events) {
      const { id, queued } = await queueRedelivery(trx, { orgId, webhookId, eventId, now: options.now });
      if (queued) report.queued.push(eventId);
      else if (await deliveries.makeDeliveryDueNow(trx, webhookId, id, options.now)) report.madeDue.push(eventId);
      else report.alreadyPending.push(eventId);
    }
    if (report.madeDue.length > 0) await notifyDeliveryWorkers(trx, webhookId);
    if (report.queued.length > 0 || report.madeDue.length > 0) {
      await requireStillOn(trx, orgId, webhookId);
      await recordAudit(trx, audit);
    }
    return report;
  });
}
