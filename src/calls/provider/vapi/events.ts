// Vapi's status-update and end-of-call-report messages, and a looked-up Call, as provider-neutral events.
// A report delivered twice, or told again by a lookup, carries the same dedupe key.
import type { InboundEvent, ProviderEnding, ProviderEvent } from '../types.js';
import { conversationOf, type VapiOutcomeSource } from './conversation.js';
import { endingFor } from './ended-reasons.js';
import type { VapiCall, VapiServerMessage } from './wire.js';

/** The key in the assistant's metadata that carries our call id (see VapiCreateCall). */
export const CALL_ID_KEY = 'platformCallId';

type Progress = 'dialing' | 'ringing' | 'in_progress';

/**
 * Vapi's call statuses that move our call forward. `scheduled` and `forwarding` add nothing, and
 * `ended` waits for the end-of-call report, which carries the artefacts (a lookup reads them from the call).
 */
const PROGRESS: Readonly<Record<string, Progress>> = {
  queued: 'dialing',
  ringing: 'ringing',
  'in-progress': 'in_progress',
};

/** An id as sent, or null when it is not a non-empty string PostgreSQL can store (no NUL). */
function idOf(value: unknown): string | null {
  return typeof value === 'string' && value !== '' && !value.includes('\u0000') ? value : null;
}

/** Our call id as carried in the call's assistant metadata, or null. */
export function platformCallId(call: VapiCall | undefined): string | null {
  return idOf(call?.assistantOverrides?.metadata?.[CALL_ID_KEY]);
}

function date(value: string | number | undefined, fallback: Date): Date {
  if (value === undefined) return fallback;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? fallback : at;
}

/** How the call ended, from its endedReason through the table, with what the conversation produced. */
function endingOf(endedReason: string | undefined, source: VapiOutcomeSource): ProviderEnding {
  const ending = endingFor(endedReason);
  const conversation = conversationOf(source);
  switch (ending.status) {
    case 'completed':
      return {
        status: 'completed',
        reason: null,
        conversation: conversation ?? {
          durationSec: 0,
          recordingUrl: null,
          transcript: [],
          analysis: { intent: null, sentiment: null, outcome: null },
        },
      };
    case 'failed':
      return { status: 'failed', reason: ending.reason, conversation };
    case 'busy':
      return { status: 'busy', reason: 'busy', conversation: null };
    case 'no_answer':
      return { status: 'no_answer', reason: 'no_answer', conversation: null };
  }
}

function inbound(call: VapiCall | undefined, key: string, event: ProviderEvent): InboundEvent[] {
  const callId = platformCallId(call);
  const providerCallId = idOf(call?.id);
  if (!callId && !providerCallId) return [];
  return [{ dedupeKey: `${providerCallId ?? callId}:${key}`, callId, providerCallId, event }];
}

/** The events one server message carries: none for the message types that say nothing about progress. */
export function eventsOfMessage(message: VapiServerMessage, now: Date): InboundEvent[] {
  const at = date(message.timestamp, now);
  if (message.type === 'status-update') {
    const status = message.status ? PROGRESS[message.status] : undefined;
    return status ? inbound(message.call, `status:${message.status}`, { type: 'status', at, status }) : [];
  }
  if (message.type === 'end-of-call-report') {
    const ending = endingOf(message.endedReason, message);
    return inbound(message.call, 'end-of-call-report', { type: 'ended', at: date(message.endedAt, at), ending });
  }
  return [];
}

/** A looked-up call's story so far: its current status, and its ending once it has ended. */
export function eventsOfCall(call: VapiCall, now: Date): InboundEvent[] {
  if (call.status === 'ended') {
    const ending = endingOf(call.endedReason, call);
    return inbound(call, 'end-of-call-report', { type: 'ended', at: date(call.endedAt, now), ending });
  }
  const status = call.status ? PROGRESS[call.status] : undefined;
  if (!status) return [];
  const at = status === 'in_progress' ? date(call.startedAt, now) : now;
  return inbound(call, `status:${call.status}`, { type: 'status', at, status });
}
