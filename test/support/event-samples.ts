// A valid `data` payload for every event kind of the generated registry: tests that deliver each kind
// draw from here, so a new kind in the spec does not compile until it has a sample.
import { randomUUID } from 'node:crypto';
import type { EventDataByKind, EventKind } from '../../generated/events.js';

/** One sample payload per kind. */
export function sampleEventData(): { [K in EventKind]: EventDataByKind[K] } {
  const call = { call_id: randomUUID(), provider_call_id: 'sim_0123456789abcdef' };
  return {
    'call.completed': {
      ...call,
      status: 'completed',
      duration_sec: 47,
      recording_url: 'https://recordings.example.com/calls/a.mp3',
    },
    'call.failed': { ...call, status: 'failed', reason: 'carrier_rejected' },
    'call.no_answer': { ...call, status: 'no_answer', reason: 'no_answer' },
    'call.busy': { ...call, status: 'busy', reason: 'busy' },
    'call.canceled': { ...call, status: 'canceled', reason: 'canceled_by_client' },
    'contact.created': {
      contact_id: randomUUID(),
      phone_e164: '+919812345678',
      name: 'Asha Verma',
      consent_capture: 'manual',
    },
    'balance.low': { balance_paise: 9200, threshold_paise: 10_000, held_paise: 6000 },
    'webhook.test': { webhook_id: randomUUID(), message: 'This is a test delivery.' },
  };
}
