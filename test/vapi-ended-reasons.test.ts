// The mapping table from Vapi's endedReason values covers the vendor's enum in the pinned document
// exactly: a value the vendor adds fails here until docs/providers.md's table and the code place it.
import { describe, expect, it } from 'vitest';
import { ENDED_REASONS } from '../src/calls/provider/vapi/ended-reasons.js';
import { vendorEndedReasons } from './support/vapi.js';

describe('Vapi endedReason table', () => {
  const vendor = vendorEndedReasons();

  it('maps every endedReason the vendor document lists', () => {
    const unmapped = vendor.filter((value) => !ENDED_REASONS.has(value));
    expect(unmapped).toEqual([]);
  });

  it('lists no value the vendor document does not', () => {
    const known = new Set(vendor);
    expect([...ENDED_REASONS.keys()].filter((value) => !known.has(value))).toEqual([]);
  });

  it.each([
    ['customer-ended-call', { status: 'completed' }],
    ['assistant-ended-call', { status: 'completed' }],
    ['exceeded-max-duration', { status: 'completed' }],
    ['customer-busy', { status: 'busy' }],
    ['customer-did-not-answer', { status: 'no_answer' }],
    ['voicemail', { status: 'no_answer' }],
    ['twilio-failed-to-connect-call', { status: 'failed', reason: 'carrier_rejected' }],
    ['call.in-progress.error-providerfault-outbound-sip-408-request-timeout', { status: 'failed', reason: 'timeout' }],
    ['pipeline-error-openai-llm-failed', { status: 'failed', reason: 'provider_error' }],
    ['call.start.error-subscription-insufficient-credits', { status: 'failed', reason: 'provider_error' }],
  ])('%s ends the call as %o', (value, ending) => {
    expect(ENDED_REASONS.get(value)).toEqual(ending);
  });
});
