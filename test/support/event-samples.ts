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
    'campaign.finished': {
      id: randomUUID(),
      name: 'November renewals',
      agent_id: randomUUID(),
      status: 'completed',
      paused_reason: null,
      contacts: { filter: { consent_capture: ['website_form'] } },
      exclude_consent_capture: [],
      schedule: {
        starts_at: '2026-11-21T09:30:00.000Z',
        ends_at: null,
        timezone: 'Asia/Kolkata',
        windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '10:00', end: '18:00' }],
      },
      max_concurrency: 10,
      retry: { max_attempts: 2, on: ['busy'], failed_reasons: [], interval_sec: 3600 },
      metadata: {},
      counters: {
        contacts_total: 3,
        pending: 0,
        in_progress: 0,
        completed: 1,
        failed: 0,
        no_answer: 1,
        busy: 0,
        expired: 0,
        canceled: 0,
        skipped: { total: 1, suppressed: 1, consent_excluded: 0 },
        calls_placed: 3,
        credits_charged_paise: 157,
      },
      created_at: '2026-11-21T09:30:00.000Z',
      updated_at: '2026-11-21T11:02:10.000Z',
      finished_at: '2026-11-21T11:02:10.000Z',
    },
    'webhook.test': { webhook_id: randomUUID(), message: 'This is a test delivery.' },
  };
}
