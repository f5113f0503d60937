// Webhook endpoint rules: registration (URL policy, per-org maximum, secret), changes, a deletion that
// is final, secret rotation, test sends, redelivery, and deliveries in API form.
import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { DomainError, invalidField, invalidFields, notFound } from '../errors.js';
import { validators } from '../contract/validators.js';
import { messagesByField } from '../contract/validation-messages.js';
import type { ErrorObject } from 'ajv';
import * as attempts from './attempt-queries.js';
import { unknownCursor, type PageStart } from '../contract/pagination.js';
import { deleteInBatches } from '../database/batches.js';
import { recordAudit, type AuditEntry } from '../audit/service.js';
import * as deliveries from './delivery-queries.js';
import { deliverOnce } from './delivery/deliver-once.js';
import { waitForSendsToEnd, type StopReason } from './delivery/in-flight.js';
import { abandonDropped, cleanUpAfterAnswer, removeDeleted } from './endpoint-cleanup.js';
import { parseAllowlist } from './delivery/address-policy.js';
import { assertDeliverableUrl, UrlRefusedError } from './delivery/url-guard.js';
import { toDelivery, toWebhook, type Webhook, type WebhookDelivery } from './mapper.js';
import { newEventId } from './outbox.js';
import { deleteOldEvents, notifyDeliveryWorkers } from './event-queries.js';
import {
  MAX_ENDPOINTS_PER_ORG,
  MAX_SECRETS_IN_GRACE,
  REDELIVERY_RETRY_AFTER_S,
  SECRET_GRACE_MS,
  TEST_SEND_RETRY_AFTER_S,
} from './policy.js';
import * as webhooks from './queries.js';

export type { Webhook, WebhookDelivery } from './mapper.js';
export type { AttemptOutcome, DeliveryLogEntry } from './attempt-queries.js';

type Schemas = components['schemas'];

const ENDPOINT = 'webhook endpoint';

/** How often a switch-off or deletion looks whether the sends in flight to the endpoint have ended. */
const DELETION_POLL_MS = 25;

/** A signing secret: 32 bytes from the CSPRNG as 64 hex characters. */
function newSecret(): string {
  return randomBytes(32).toString('hex');
}

async function requireWebhook(db: Db, orgId: string, id: string): Promise<webhooks.WebhookRow> {
  const row = await webhooks.findWebhookRow(db, orgId, id);
  if (!row) throw notFound(ENDPOINT);
  return row;
}

/** The deliveries with their kept attempts (newest first), in API form. */
async function withAttempts(db: Db, rows: deliveries.DeliveryRow[]): Promise<WebhookDelivery[]> {
  const kept = await attempts.attemptsOfDeliveries(
    db,
    rows.map((row) => row.id),
  );
  return rows.map((row) =>
    toDelivery(
      row,
      kept.filter((attempt) => attempt.delivery_id === row.id),
    ),
  );
}

async function deliveryView(db: Db, webhookId: string, deliveryId: string): Promise<WebhookDelivery> {
  const row = await deliveries.findDeliveryRow(db, webhookId, deliveryId);
  if (!row) throw notFound('delivery', 'delivery_id');
  const [view] = await withAttempts(db, [row]);
  return view!;
}

/**
 * The input of a new endpoint from outside the API pipeline (the dashboard's form), checked against the
 * spec's WebhookCreate schema as the API checks its request body. Throws invalid_request naming the field.
 */
export function checkWebhookCreate(input: unknown): Schemas['WebhookCreate'] {
  if (validators.WebhookCreate(input)) return input;
  throw invalidFields(messagesByField((validators.WebhookCreate.errors ?? []) as ErrorObject[], { data: input }));
}

/**
 * Registers an endpoint and returns it with its new secret; `audit`, when given, is written to the audit
 * log in the same transaction. Throws invalid_request (param url) for a URL deliveries may not go to,
 * forbidden when the org already has the maximum number of endpoints.
 */
export async function createWebhook(
  deps: AppDeps,
  orgId: string,
  input: Schemas['WebhookCreate'],
  audit?: AuditEntry,
): Promise<{ webhook: Webhook; secret: string }> {
  try {
    await assertDeliverableUrl(input.url, parseAllowlist(deps.config.webhookPrivateAllowlist));
  } catch (error) {
    if (error instanceof UrlRefusedError) throw invalidField('url', error.message);
    throw error;
  }
  const secret = newSecret();
  const row = await deps.db.transaction().execute(async (trx) => {
    await webhooks.lockOrgEndpoints(trx, orgId);
    if ((await webhooks.countWebhooks(trx, orgId)) >= MAX_ENDPOINTS_PER_ORG) {
      throw new DomainError(
        'forbidden',
        `An organisation may register at most ${MAX_ENDPOINTS_PER_ORG} webhook endpoints; delete one first.`,
      );
    }
    const inserted = await webhooks.insertWebhook(trx, {
      orgId,
      url: input.url,
      events: input.events,
      secret,
      now: deps.clock.now(),
    });
    if (audit) await recordAudit(trx, audit);
    return inserted;
  });
  return { webhook: toWebhook(row), secret };
}

/** One page of the org's endpoints, newest first, with the total. */
export async function listWebhooks(
  db: Db,
  orgId: string,
  page: { limit: number } & PageStart,
): Promise<{ items: Webhook[]; total: number; more: boolean }> {
  if ('cursor' in page && !(await webhooks.findWebhookRow(db, orgId, page.cursor))) throw unknownCursor(page.side);
  const { rows, total, more } = await webhooks.listWebhookRows(db, orgId, page);
  return { items: rows.map(toWebhook), total, more };
}

/** The org's endpoint; throws not_found. */
export async function getWebhook(db: Db, orgId: string, id: string): Promise<Webhook> {
  return toWebhook(await requireWebhook(db, orgId, id));
}

/**
 * Replaces events and/or switches the endpoint on or off, with `audit` (when given) in the same
 * transaction. Switching off drops every delivery pending at that moment (they are abandoned, and stay
 * so if it is switched on again), stops the sends in flight to it and returns once none can reach it,
 * whatever its backlog; the dropped rows are marked abandoned after the answer. Switching on clears
 * the automatic-disable streak. Throws not_found.
 */
export async function updateWebhook(
  deps: AppDeps,
  orgId: string,
  id: string,
  change: Schemas['WebhookUpdate'],
  audit?: AuditEntry,
): Promise<Webhook> {
  const switchingOff = change.active === false;
  const row = await deps.db.transaction().execute(async (trx) => {
    // Claims in progress are waited for, and claims after this see the switch-off (claimDeliveries).
    if (switchingOff && !(await webhooks.lockWebhookAgainstClaims(trx, orgId, id))) throw notFound(ENDPOINT);
    const updated = await webhooks.updateWebhookRow(trx, orgId, id, { ...change, now: deps.clock.now() });
    if (!updated) throw notFound(ENDPOINT);
    if (audit) await recordAudit(trx, audit);
    return updated;
  });
  if (switchingOff) {
    await stopSends(deps, id, 'switched_off');
    void cleanUpAfterAnswer(deps, id, () => abandonDropped(deps.db, id));
  }
  return toWebhook(row);
}

/**
 * After a switch-off or a deletion committed: stops the sends to the endpoint in flight in this process
 * and (through a notification) in others, and waits until none of its deliveries is out on lease.
 */
async function stopSends(deps: AppDeps, id: string, why: StopReason): Promise<void> {
  deps.delivery.inFlight.abortEndpoint(id, why);
  webhooks.notifyEndpointStopped(deps.db, id, why).catch((error: unknown) => {
    deps.logger.warn(
      { err: error, webhookId: id },
      'could not notify other processes that a webhook endpoint stopped; their sends end with their leases',
    );
  });
  await waitForSendsToEnd(deps.db, deps.clock, id, { boundMs: deps.delivery.leaseMs, pollMs: DELETION_POLL_MS });
}

/**
 * Deletes the endpoint for good (the protocol: delivery/in-flight.ts); `audit`, when given, commits with
 * the deletion's mark. Sends to it in flight are stopped, not waited for; returns once every one has
 * ended and none can start, so after this no request to the endpoint begins, whatever its backlog: its
 * deliveries and then its row are removed after the answer, in batches. Throws not_found.
 */
export async function deleteWebhook(deps: AppDeps, orgId: string, id: string, audit?: AuditEntry): Promise<void> {
  // The endpoint row alone is locked while it is marked: a claim in progress holds its delivery rows
  // and then waits for this lock, so touching delivery rows under it could deadlock with that claim.
  await deps.db.transaction().execute(async (trx) => {
    if (!(await webhooks.lockWebhookAgainstClaims(trx, orgId, id))) throw notFound(ENDPOINT);
    await webhooks.markWebhookDeleted(trx, id, deps.clock.now());
    if (audit) await recordAudit(trx, audit);
  });
  // No claim succeeds any more: once the sends in flight have ended, what is left can go.
  await stopSends(deps, id, 'deleted');
  void cleanUpAfterAnswer(deps, id, () => removeDeleted(deps.db, id));
}

/**
 * Issues a new secret; the old one keeps signing for 24 hours, whatever rotations follow, unless
 * `expirePrevious` ends every replaced secret's grace at once. `audit`, when given, commits with the new
 * secret. Throws not_found, or invalid_state when as many replaced secrets as allowed are still in their
 * grace period (never with expirePrevious).
 */
export async function rotateWebhookSecret(
  deps: AppDeps,
  orgId: string,
  id: string,
  options: { expirePrevious: boolean; audit?: AuditEntry },
): Promise<{ webhook: Webhook; secret: string }> {
  const now = deps.clock.now();
  const secret = newSecret();
  const { audit } = options;
  const change = {
    secret,
    graceUntil: options.expirePrevious ? null : new Date(now.getTime() + SECRET_GRACE_MS),
    now,
    maxPrevious: MAX_SECRETS_IN_GRACE,
  };
  const row = audit
    ? await deps.db.transaction().execute(async (trx) => {
        const rotated = await webhooks.rotateSecretRow(trx, orgId, id, change);
        if (typeof rotated !== 'string') await recordAudit(trx, audit);
        return rotated;
      })
    : await webhooks.rotateSecretRow(deps.db, orgId, id, change);
  if (row === 'not_found') throw notFound(ENDPOINT);
  if (row === 'too_many') {
    throw new DomainError(
      'invalid_state',
      `This endpoint already has ${MAX_SECRETS_IN_GRACE} replaced secrets in their 24-hour grace period; rotate again once the oldest has expired, or rotate with expire_previous=true to end the grace of all of them now (for a secret that leaked).`,
    );
  }
  return { webhook: toWebhook(row), secret };
}

/** The answer to a test send over a concurrency cap. */
function tooManyTestSends(scope: string, cap: number): DomainError {
  return new DomainError(
    'too_many_requests',
    `At most ${cap} test sends may be in flight ${scope}; retry in ${TEST_SEND_RETRY_AFTER_S} seconds.`,
    { headers: { 'Retry-After': String(TEST_SEND_RETRY_AFTER_S) } },
  );
}

/**
 * Sends a signed webhook.test event to the endpoint now (even when it is switched off), once, without
 * retry, through the one delivery path, and returns the recorded delivery. Throws not_found (also when
 * the endpoint is deleted while the test is under way), too_many_requests when the org or this process
 * already has as many test sends in flight as allowed. `audit`, when given, commits with the test
 * delivery's record, before the send.
 */
export async function sendTestEvent(
  deps: AppDeps,
  orgId: string,
  id: string,
  traceparent: string | null,
  audit?: AuditEntry,
): Promise<WebhookDelivery> {
  const { config, delivery } = deps;
  if (delivery.testSends.inFlight >= config.testSendsPerProcess) {
    deps.metrics.rateLimitRejections.inc({ reason: 'test_sends' });
    throw tooManyTestSends('on this server', config.testSendsPerProcess);
  }
  delivery.testSends.inFlight += 1;
  try {
    const now = deps.clock.now();
    const claimed = await deliveries.insertClaimedTestDelivery(
      deps.db,
      {
        orgId,
        webhookId: id,
        event: {
          id: newEventId(),
          kind: 'webhook.test',
          data: { webhook_id: id, message: 'This is a test delivery.' },
          createdAt: now,
          traceparent,
        },
        maxInFlight: config.testSendsPerOrg,
      },
      { now, owner: delivery.owner, expiresAt: new Date(now.getTime() + delivery.leaseMs) },
      audit && ((trx) => recordAudit(trx, audit)),
    );
    if (claimed === 'not_found') throw notFound(ENDPOINT);
    if (claimed === 'busy') {
      deps.metrics.rateLimitRejections.inc({ reason: 'test_sends' });
      throw tooManyTestSends('for an organisation', config.testSendsPerOrg);
    }
    const outcome = await deliverOnce(deps, claimed);
    if (outcome.kind === 'aborted' || (outcome.kind === 'attempted' && outcome.recorded === 'gone')) {
      throw notFound(ENDPOINT);
    }
    if (outcome.kind === 'attempted' && outcome.recorded === 'lease_lost') {
      throw new Error(`the lease of test delivery ${claimed.id} lapsed before its attempt was recorded`);
    }
    return await deliveryView(deps.db, id, claimed.id);
  } finally {
    delivery.testSends.inFlight -= 1;
  }
}

const switchedOff = () =>
  new DomainError('invalid_state', 'The endpoint is switched off; switch it on with PATCH /webhooks/{id} first.');

/**
 * Queues a new delivery of the same event to the endpoint, due now, and returns it with queued true;
 * when the endpoint already has a pending delivery of that event, returns that one with queued false
 * (however often a redelivery is asked for, one is pending at a time; retryNow makes it due now). Throws not_found for an unknown endpoint or delivery,
 * invalid_state when the endpoint is switched off, too_many_requests when the org already has as many
 * redeliveries pending as REDELIVERIES_PER_ORG allows. `audit`, when given, commits with a new
 * redelivery (none is written when one was already pending).
 */
export async function redeliver(
  deps: AppDeps,
  orgId: string,
  id: string,
  deliveryId: string,
  audit?: AuditEntry,
): Promise<{ delivery: WebhookDelivery; queued: boolean }> {
  const outcome = await deps.db.transaction().execute(async (trx) => {
    const webhook = await requireWebhook(trx, orgId, id);
    const original = await deliveries.findDeliveryRow(trx, id, deliveryId);
    if (!original) throw notFound('delivery', 'delivery_id');
    if (!webhook.active) throw switchedOff();
    const outcome = await queueRedelivery(trx, {
      orgId,
      webhookId: id,
      eventId: original.event_id,
      now: deps.clock.now(),
      cap: {
        max: deps.config.redeliveriesPerOrg,
        refused: () => deps.metrics.rateLimitRejections.inc({ reason: 'redeliveries' }),
      },
    });
    if (outcome.queued) {
      const still = await webhooks.lockWebhookRow(trx, orgId, id);
      if (!still) throw notFound(ENDPOINT);
      if (!still.active) throw switchedOff();
      if (audit) await recordAudit(trx, audit);
    }
    return outcome;
  });
  return { delivery: await deliveryView(deps.db, id, outcome.id), queued: outcome.queued };
}

/** What "retry now" did: made the delivery due now, found it already due (or being sent), or not pending. */
export type RetryNowOutcome = 'made_due' | 'already_due' | 'not_pending';

/**
 * Makes the endpoint's delivery, pending and waiting for its next retry, due now: the worker claims it
 * as any due delivery, and the attempt counts as that retry. Returns what it did and the delivery.
 * Throws not_found for an unknown endpoint or delivery, invalid_state when the endpoint is switched
 * off. `audit`, when given, commits with the change (none is written when nothing changed).
 */
export async function retryNow(
  deps: AppDeps,
  orgId: string,
  id: string,
  deliveryId: string,
  audit?: AuditEntry,
): Promise<{ delivery: WebhookDelivery; outcome: RetryNowOutcome }> {
  const outcome = await deps.db.transaction().execute(async (trx): Promise<RetryNowOutcome> => {
    const webhook = await requireWebhook(trx, orgId, id);
    if (!(await deliveries.findDeliveryRow(trx, id, deliveryId))) throw notFound('delivery', 'delivery_id');
    if (!webhook.active) throw switchedOff();
    if (await deliveries.makeDeliveryDueNow(trx, id, deliveryId, deps.clock.now())) {
      await notifyDeliveryWorkers(trx, deliveryId);
      if (audit) await recordAudit(trx, audit);
      return 'made_due';
    }
    const row = await deliveries.findDeliveryRow(trx, id, deliveryId);
    return row?.status === 'pending' && !row.dropped ? 'already_due' : 'not_pending';
  });
  return { delivery: await deliveryView(deps.db, id, deliveryId), outcome };
}

/**
 * Inside `trx`: the endpoint's pending delivery of the event when it has one (queued false), else a new
 * redelivery due now (queued true), with the delivery workers told. With `cap`, throws
 * too_many_requests (after calling `cap.refused`) when the org already has `cap.max` redeliveries
 * pending; an operator's replay passes none. The org's redeliveries take turns (an advisory lock).
 * Throws not_found when the endpoint was deleted meanwhile.
 *
 * A caller that queued one checks, last, that the endpoint is still on with `lockWebhookRow`: a
 * switch-off under way or committed since its first check is then waited for and seen, and a later
 * one waits for the commit and abandons what was queued. Taking that lock last keeps it short; the
 * worker needs the row to record attempts.
 */
export async function queueRedelivery(
  trx: Db,
  redelivery: {
    orgId: string;
    webhookId: string;
    eventId: string;
    now: Date;
    cap?: { max: number; refused(): void };
  },
): Promise<{ id: string; queued: boolean }> {
  const { orgId, webhookId, eventId, cap } = redelivery;
  await deliveries.lockOrgRedeliveries(trx, orgId);
  const pending = await deliveries.findPendingDeliveryOfEvent(trx, webhookId, eventId);
  if (pending) return { id: pending, queued: false };
  if (cap && (await deliveries.countPendingRedeliveries(trx, orgId)) >= cap.max) {
    cap.refused();
    throw new DomainError(
      'too_many_requests',
      `At most ${cap.max} redeliveries may be pending for an organisation; retry in ${REDELIVERY_RETRY_AFTER_S} seconds.`,
      { headers: { 'Retry-After': String(REDELIVERY_RETRY_AFTER_S) } },
    );
  }
  // The endpoint may have been removed while this waited its turn: its delivery could not be stored.
  if (!(await webhooks.holdLiveWebhook(trx, orgId, webhookId))) throw notFound(ENDPOINT);
  const id = await deliveries.insertPendingDelivery(trx, {
    webhookId,
    orgId,
    eventId,
    dueAt: redelivery.now,
    redelivery: true,
  });
  await notifyDeliveryWorkers(trx, eventId);
  return { id, queued: true };
}

/** One page of the endpoint's deliveries (newest first, optionally in one status). Throws not_found. */
export async function listDeliveries(
  db: Db,
  orgId: string,
  id: string,
  page: { limit: number; status?: Schemas['WebhookDeliveryStatus'] } & PageStart,
): Promise<{ items: WebhookDelivery[]; total: number; more: boolean }> {
  await requireWebhook(db, orgId, id);
  if ('cursor' in page && !(await deliveries.findDeliveryRow(db, id, page.cursor))) throw unknownCursor(page.side);
  const { rows, total, more } = await deliveries.listDeliveryRows(db, id, page);
  return { items: await withAttempts(db, rows), total, more };
}

/**
 * An endpoint's delivery log for operators, whatever its org: its newest `limit` attempts, newest
 * first. Throws not_found (param webhook) for an unknown endpoint.
 */
export async function listDeliveryLog(
  db: Db,
  webhookId: string,
  options: { limit: number; outcome?: attempts.AttemptOutcome },
): Promise<attempts.DeliveryLogEntry[]> {
  if (!(await webhooks.webhookExists(db, webhookId))) {
    throw new DomainError('not_found', `no webhook with id ${webhookId}`, { param: 'webhook' });
  }
  return attempts.listDeliveryLog(db, webhookId, options);
}

/**
 * The org's endpoint's delivery log: its newest `limit` attempts, newest first, optionally only those
 * of one outcome (a 2xx answer or not) and one event kind. Throws not_found.
 */
export async function listEndpointLog(
  db: Db,
  orgId: string,
  id: string,
  options: { limit: number; outcome?: attempts.AttemptOutcome; event?: string },
): Promise<attempts.DeliveryLogEntry[]> {
  await requireWebhook(db, orgId, id);
  return attempts.listDeliveryLog(db, id, options);
}

/** Each endpoint's failed attempts (no 2xx answer) since `since`, by endpoint id. */
export async function countRecentFailures(db: Db, webhookIds: string[], since: Date): Promise<Map<string, number>> {
  return attempts.countFailedAttemptsSince(db, webhookIds, since);
}

/**
 * Removes delivery history older than `before`, in batches of `batchSize`: finished deliveries no kept
 * attempt refers to (each endpoint keeps its last 100 attempts, and their deliveries), then events no
 * delivery refers to. Returns the rows removed per table; database errors propagate.
 */
export async function pruneDeliveryHistory(
  db: Db,
  before: Date,
  batchSize: number,
): Promise<{ webhook_deliveries: number; events: number }> {
  return {
    webhook_deliveries: await deleteInBatches(() => deliveries.deleteOldDeliveries(db, before, batchSize), batchSize),
    events: await deleteInBatches(() => deleteOldEvents(db, before, batchSize), batchSize),
  };
}
