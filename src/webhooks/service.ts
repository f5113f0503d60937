// Webhook endpoint rules: registration (URL policy, per-org maximum, secret), changes, a deletion that
// is final, secret rotation, test sends, redelivery, and deliveries in API form.
import { randomBytes } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { newEventId, type EventKind } from './outbox.js';
import { parseAllowlist } from './delivery/address-policy.js';
import { performAttempt, type AttemptResult } from './delivery/attempt.js';
import { EndpointLockSession } from './delivery/endpoint-lock.js';
import type { FailureKind } from './delivery/failure.js';
import { createGuardedAgent } from './delivery/guarded-agent.js';
import { recordTestDelivery } from './delivery/outcome.js';
import { DELIVERY_TIMEOUT_MS } from './delivery/send.js';
import { sendsInFlight } from './delivery/sends-in-flight.js';
import { assertDeliverableUrl, UrlRefusedError } from './delivery/url-guard.js';
import { DomainError, invalidField, notFound } from '../errors.js';
import * as attempts from './attempt-queries.js';
import * as deliveries from './delivery-queries.js';
import * as locks from './delivery/lock-queries.js';
import * as webhooks from './queries.js';

type Schemas = components['schemas'];
/** An endpoint in API form. */
export type Webhook = Schemas['Webhook'];
/** A delivery with its kept attempts, in API form. */
export type WebhookDelivery = Schemas['WebhookDelivery'];

/** Endpoints one org may register. */
const MAX_WEBHOOKS_PER_ORG = 20;

/** How long the previous secret keeps signing after a rotation. */
const SECRET_GRACE_MS = 24 * 3_600_000;

/**
 * The longest a deletion waits for attempts in flight to stop. They are aborted at once (in other
 * processes within about a second); this bound only matters when a sender cannot be told, and it is
 * longer than the 10-second send timeout after which every attempt ends anyway.
 */
const DELETE_LOCK_WAIT_MS = DELIVERY_TIMEOUT_MS + 5_000;

/** A deleting transaction's statement timeout: room for the lock wait above, whatever the pool's default. */
const DELETE_STATEMENT_TIMEOUT_MS = DELETE_LOCK_WAIT_MS + 5_000;

const ENDPOINT = 'webhook endpoint';

function toWebhook(row: webhooks.WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events as Webhook['events'],
    active: row.active,
    created_at: row.created_at.toISOString(),
    last_delivery_at: row.last_delivery_at?.toISOString() ?? null,
    last_delivery_status: row.last_delivery_status,
  };
}

function toDelivery(row: deliveries.DeliveryRow, kept: attempts.AttemptRow[]): WebhookDelivery {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event: row.event as EventKind,
    status: row.status,
    attempt_count: row.attempt_count,
    next_attempt_at: row.status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    created_at: row.created_at.toISOString(),
    attempts: kept.map((attempt) => ({
      id: attempt.id,
      attempt: attempt.attempt,
      status_code: attempt.status_code,
      failure_kind: attempt.failure_kind as FailureKind | null,
      response_excerpt: attempt.response_excerpt,
      duration_ms: attempt.duration_ms,
      attempted_at: attempt.attempted_at.toISOString(),
    })),
  };
}

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
 * Registers an endpoint and returns it with its new secret. Throws invalid_request (param url) for a
 * URL deliveries may not go to, forbidden when the org already has the maximum number of endpoints.
 */
export async function createWebhook(
  deps: AppDeps,
  orgId: string,
  input: Schemas['WebhookCreate'],
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
    if ((await webhooks.countWebhooks(trx, orgId)) >= MAX_WEBHOOKS_PER_ORG) {
      throw new DomainError(
        'forbidden',
        `An organisation may register at most ${MAX_WEBHOOKS_PER_ORG} webhook endpoints; delete one first.`,
      );
    }
    return webhooks.insertWebhook(trx, { orgId, url: input.url, events: input.events, secret, now: deps.clock.now() });
  });
  return { webhook: toWebhook(row), secret };
}

/** One page of the org's endpoints, newest first, with the total. */
export async function listWebhooks(
  db: Db,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ items: Webhook[]; total: number }> {
  const { rows, total } = await webhooks.listWebhookRows(db, orgId, page);
  return { items: rows.map(toWebhook), total };
}

/** The org's endpoint; throws not_found. */
export async function getWebhook(db: Db, orgId: string, id: string): Promise<Webhook> {
  return toWebhook(await requireWebhook(db, orgId, id));
}

/**
 * Replaces events and/or switches the endpoint on or off. Switching off abandons its pending
 * deliveries; switching on clears the automatic-disable streak. Throws not_found.
 */
export async function updateWebhook(
  deps: AppDeps,
  orgId: string,
  id: string,
  change: Schemas['WebhookUpdate'],
): Promise<Webhook> {
  const row = await deps.db.transaction().execute(async (trx) => {
    const updated = await webhooks.updateWebhookRow(trx, orgId, id, { ...change, now: deps.clock.now() });
    if (!updated) throw notFound(ENDPOINT);
    if (change.active === false) await deliveries.abandonPendingDeliveries(trx, id);
    return updated;
  });
  return toWebhook(row);
}

/**
 * Deletes the endpoint for good. Attempts to it in flight are aborted, not waited for; returns once
 * every one has stopped and none can start any more (see repositories/webhook-locks.ts), so after
 * this no request to the endpoint begins. Throws not_found.
 */
export async function deleteWebhook(deps: AppDeps, orgId: string, id: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await requireWebhook(trx, orgId, id);
    await locks.beginDeletion(trx, id, {
      lockTimeoutMs: DELETE_LOCK_WAIT_MS,
      statementTimeoutMs: DELETE_STATEMENT_TIMEOUT_MS,
    });
    // Stop the attempts in flight: this process's at once, other processes' through the notification
    // (or, should it be missed, their lock session's watch within a second).
    sendsInFlight.abortEndpoint(id);
    locks.notifyDeletion(deps.db, id).catch((error: unknown) => {
      deps.logger.warn(
        { err: error, webhookId: id },
        'could not notify workers of a webhook deletion; they notice it within a second',
      );
    });
    await locks.waitForSenders(trx, id);
    // Another deletion of it may have finished while this one waited for its turn.
    if (!(await webhooks.deleteWebhookRow(trx, orgId, id))) throw notFound(ENDPOINT);
  });
}

/** Issues a new secret; the old one keeps signing for 24 hours. Throws not_found. */
export async function rotateWebhookSecret(
  deps: AppDeps,
  orgId: string,
  id: string,
): Promise<{ webhook: Webhook; secret: string }> {
  const now = deps.clock.now();
  const secret = newSecret();
  const row = await webhooks.rotateSecretRow(deps.db, orgId, id, {
    secret,
    graceUntil: new Date(now.getTime() + SECRET_GRACE_MS),
    now,
  });
  if (!row) throw notFound(ENDPOINT);
  return { webhook: toWebhook(row), secret };
}

/**
 * Sends a signed webhook.test event to the endpoint now (even when it is switched off), once, without
 * retry, and returns the recorded delivery. Throws not_found.
 */
export async function sendTestEvent(deps: AppDeps, orgId: string, id: string): Promise<WebhookDelivery> {
  await requireWebhook(deps.db, orgId, id);
  const event = {
    id: newEventId(),
    kind: 'webhook.test',
    data: { webhook_id: id, message: 'This is a test delivery.' },
    createdAt: deps.clock.now(),
  };
  const agent = createGuardedAgent({
    allowlist: parseAllowlist(deps.config.webhookPrivateAllowlist),
    caCerts: deps.config.webhookCaCerts,
  });
  let result: AttemptResult;
  try {
    const session = await EndpointLockSession.open(deps.db);
    try {
      const entered = await session.enter(id, deps.clock.now());
      if (!entered) throw notFound(ENDPOINT);
      try {
        const context = { dispatcher: agent, clock: deps.clock, logger: deps.logger };
        result = await performAttempt(context, entered.target, event, entered.signal);
      } finally {
        await entered.leave();
      }
      // Aborted because the endpoint is being deleted: it is gone.
      if (entered.deleted) throw notFound(ENDPOINT);
      if (entered.signal.aborted) throw new Error('the webhook lock session was lost during a test delivery');
    } finally {
      await session.close();
    }
  } finally {
    await agent.destroy();
  }
  const deliveryId = await recordTestDelivery(deps.db, { orgId, webhookId: id }, event, result, deps.logger);
  if (!deliveryId) throw notFound(ENDPOINT);
  return deliveryView(deps.db, id, deliveryId);
}

/**
 * Queues a new delivery of the same event to the endpoint, due now. Throws not_found for an unknown
 * endpoint or delivery, invalid_state when the endpoint is switched off.
 */
export async function redeliver(
  deps: AppDeps,
  orgId: string,
  id: string,
  deliveryId: string,
): Promise<WebhookDelivery> {
  const newId = await deps.db.transaction().execute(async (trx) => {
    const webhook = await requireWebhook(trx, orgId, id);
    const original = await deliveries.findDeliveryRow(trx, id, deliveryId);
    if (!original) throw notFound('delivery', 'delivery_id');
    if (!webhook.active) {
      throw new DomainError(
        'invalid_state',
        'The endpoint is switched off; switch it on with PATCH /webhooks/{id} first.',
      );
    }
    const now = deps.clock.now();
    const created = await deliveries.insertDelivery(trx, {
      webhookId: id,
      orgId,
      eventId: original.event_id,
      status: 'pending',
      attemptCount: 0,
      nextAttemptAt: now,
      createdAt: now,
    });
    await deliveries.notifyDeliveryWorkers(trx, original.event_id);
    return created;
  });
  return deliveryView(deps.db, id, newId);
}

/** One page of the endpoint's deliveries (newest first, optionally in one status). Throws not_found. */
export async function listDeliveries(
  db: Db,
  orgId: string,
  id: string,
  page: { limit: number; offset: number; status?: Schemas['WebhookDeliveryStatus'] },
): Promise<{ items: WebhookDelivery[]; total: number }> {
  await requireWebhook(db, orgId, id);
  const { rows, total } = await deliveries.listDeliveryRows(db, id, page);
  return { items: await withAttempts(db, rows), total };
}

/** The endpoint's delivery log for operators (newest first, at most `limit` attempts). */
export async function listDeliveryLog(db: Db, webhookId: string, options: { limit: number }) {
  return attempts.listDeliveryLog(db, webhookId, options);
}
