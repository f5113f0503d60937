// A one-line, human summary of a delivered event for each kind the spec declares (used by
// webhook:listen). Typed against the generated registry: a new kind does not compile until it has one.
import type { EventDataByKind, EventKind } from '../../generated/events.js';

const SUMMARIES: { [K in EventKind]: (data: EventDataByKind[K]) => string } = {
  'call.completed': (data) =>
    `call ${data.call_id} completed after ${data.duration_sec} s${data.recording_url ? `, recording ${data.recording_url}` : ''}`,
  'call.failed': (data) => `call ${data.call_id} failed (${data.reason ?? 'no reason given'})`,
  'call.no_answer': (data) => `call ${data.call_id} was not answered (${data.reason ?? 'no reason given'})`,
  'call.busy': (data) => `call ${data.call_id} found the line busy`,
  'call.canceled': (data) => `call ${data.call_id} was canceled (${data.reason ?? 'no reason given'})`,
  'contact.created': (data) => `contact ${data.contact_id} created: ${data.name ?? '(no name)'} ${data.phone_e164}`,
  'balance.low': (data) =>
    `balance ${data.balance_paise} paise is below the threshold of ${data.threshold_paise} (${data.held_paise} held by calls in flight)`,
  'campaign.finished': (data) =>
    `campaign ${data.id} (${data.name}) finished ${data.status}: ${data.counters.completed} of ${data.counters.contacts_total} contacts completed, ${data.counters.calls_placed} calls`,
  'webhook.test': (data) => `test delivery to endpoint ${data.webhook_id}: ${data.message}`,
};

/** The summary of an event of `kind` with `data`; the kind's name alone for a kind this build does not know. */
export function summarizeEvent(kind: string, data: unknown): string {
  const summary = (SUMMARIES as Record<string, ((data: unknown) => string) | undefined>)[kind];
  return summary ? summary(data) : kind;
}
