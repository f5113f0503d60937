// A delivery as it goes on the wire: the event's envelope {id, event, created_at, data} as the body and
// the x-svc-* headers, both checked against the spec's schemas for the event's kind (generated/events.ts).
import { EVENT_KINDS, EVENT_VALIDATORS, type DeliveryHeaders, type EventKind } from '../../../generated/events.js';
import { describeErrors, validators } from '../../contract/validators.js';
import type { StoredEvent } from '../delivery-queries.js';
import { signatureHeader } from './signature.js';

/** What one attempt sends: the exact body bytes and every header. */
export interface DeliveryRequest {
  body: string;
  headers: Record<string, string> & DeliveryHeaders & { 'content-type': 'application/json'; 'user-agent': string };
}

/** The request, or why the event cannot be sent. */
export type BuiltDelivery = { ok: true; request: DeliveryRequest } | { ok: false; problem: string };

const USER_AGENT = 'voice-call-api-webhooks/1';

/** Whether `kind` is a kind the spec declares. */
export function isEventKind(kind: string): kind is EventKind {
  return (EVENT_KINDS as readonly string[]).includes(kind);
}

/** The body of every delivery of `event`: its envelope, as the spec's `WebhookEvent` shapes it. */
export function eventEnvelope(event: Pick<StoredEvent, 'id' | 'kind' | 'data' | 'createdAt' | 'livemode'>) {
  return {
    id: event.id,
    event: event.kind,
    created_at: event.createdAt.toISOString(),
    livemode: event.livemode,
    data: event.data,
  };
}

/**
 * Builds the request of one attempt: serialises the envelope once it satisfies the spec's schema for
 * its kind, signs it with `secrets` (newest first) at `timestampMs`, and checks the headers against
 * the spec too. Never throws: a delivery that breaks the contract comes back as a problem to log.
 * The same event always gives the same body bytes.
 */
export function buildDelivery(
  event: StoredEvent,
  attempt: { id: string; timestampMs: number; secrets: readonly string[] },
): BuiltDelivery {
  if (!isEventKind(event.kind)) return { ok: false, problem: `unknown event kind "${event.kind}"` };
  const names = EVENT_VALIDATORS[event.kind];
  const envelope = eventEnvelope(event);
  const checkBody = validators[names.envelope];
  if (!checkBody(envelope)) {
    return {
      ok: false,
      problem: `body breaks the ${event.kind} contract: ${describeErrors(checkBody.errors).join('; ')}`,
    };
  }
  const body = JSON.stringify(envelope);
  const headers: DeliveryHeaders = {
    'x-svc-event': event.kind,
    'x-svc-delivery': attempt.id,
    'x-svc-timestamp': String(attempt.timestampMs),
    'x-svc-signature': signatureHeader(attempt.secrets, attempt.timestampMs, body),
  };
  const checkHeaders = validators[names.headers];
  if (!checkHeaders(headers)) {
    return {
      ok: false,
      problem: `headers break the ${event.kind} contract: ${describeErrors(checkHeaders.errors).join('; ')}`,
    };
  }
  return {
    ok: true,
    request: { body, headers: { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...headers } },
  };
}
