// Maps stored endpoints, deliveries and attempts to the API's Webhook and WebhookDelivery objects.
import type { components } from '../../generated/openapi.js';
import type { AttemptRow } from './attempt-queries.js';
import type { DeliveryRow } from './delivery-queries.js';
import type { ShownWebhookRow } from './queries.js';

type Schemas = components['schemas'];
/** An endpoint in API form. */
export type Webhook = Schemas['Webhook'];
/** A delivery with its kept attempts, in API form. */
export type WebhookDelivery = Schemas['WebhookDelivery'];

/** An endpoint as the API shows it (never its secret). */
export function toWebhook(row: ShownWebhookRow): Webhook {
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

/** A delivery with its kept attempts (newest first); one a switch-off dropped is abandoned. */
export function toDelivery(row: DeliveryRow, kept: AttemptRow[]): WebhookDelivery {
  const status = row.dropped ? 'abandoned' : row.status;
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    event: row.event as WebhookDelivery['event'],
    status,
    attempt_count: row.attempt_count,
    next_attempt_at: status === 'pending' ? (row.next_attempt_at?.toISOString() ?? null) : null,
    created_at: row.created_at.toISOString(),
    attempts: kept.map((attempt) => ({
      id: attempt.id,
      attempt: attempt.attempt,
      status_code: attempt.status_code,
      failure_kind: attempt.failure_kind as Schemas['WebhookFailureKind'] | null,
      response_excerpt: attempt.response_excerpt,
      duration_ms: attempt.duration_ms,
      attempted_at: attempt.attempted_at.toISOString(),
    })),
  };
}
