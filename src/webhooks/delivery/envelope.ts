// The delivery body: the event envelope {id, event, created_at, data}, checked against the spec first.
import { envelopeValidators } from './validators.js';
import type { EventKind } from '../outbox.js';

/** An event as stored in the outbox. */
export interface StoredEvent {
  id: string;
  kind: string;
  data: unknown;
  createdAt: Date;
}

/** The serialised body, or why the event cannot be sent. */
export type RenderedEnvelope = { ok: true; body: string } | { ok: false; problem: string };

function isEventKind(kind: string): kind is EventKind {
  return Object.hasOwn(envelopeValidators, kind);
}

/**
 * Serialises an event into its envelope when it satisfies the spec's schema for its kind; otherwise
 * says what is wrong. Never throws. The same event always gives the same bytes.
 */
export function renderEnvelope(event: StoredEvent): RenderedEnvelope {
  if (!isEventKind(event.kind)) return { ok: false, problem: `unknown event kind "${event.kind}"` };
  const envelope = { id: event.id, event: event.kind, created_at: event.createdAt.toISOString(), data: event.data };
  const validate = envelopeValidators[event.kind];
  if (!validate(envelope)) {
    const problems = (validate.errors ?? []).map(
      (error) => `${error.instancePath || '/'} ${error.message ?? 'is invalid'}`,
    );
    return { ok: false, problem: `payload breaks the ${event.kind} contract: ${problems.join('; ')}` };
  }
  return { ok: true, body: JSON.stringify(envelope) };
}
