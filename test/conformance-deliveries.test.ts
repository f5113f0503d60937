// The conformance check judges every delivery its receiver got once the run is over, which on a slow
// run (an org on a low rate limit) is many minutes after the first ones arrived. A signature's 5-minute
// tolerance is measured from the moment a delivery arrived, not from the end of the run.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import apiDocument from '../generated/openapi.json' with { type: 'json' };
import { deliveryProblems } from '../src/conformance/deliveries.js';
import { SchemaJudge } from '../src/conformance/judge.js';
import type { SpecDocument } from '../src/conformance/spec/document.js';
import type { ReceivedRequest } from '../src/tools/https-receiver.js';
import { signatureHeader } from '../src/webhooks/delivery/signature.js';

const document = apiDocument as SpecDocument;
const judge = new SchemaJudge(document);
const SECRET = `whsec_${'a'.repeat(32)}`;
const MINUTE = 60_000;

/** A webhook.test delivery signed at `signedAt` that arrived at `receivedAt`. */
function delivery(signedAt: number, receivedAt: number): ReceivedRequest {
  const rawBody = JSON.stringify({
    id: 'evt_000000000000000000000001',
    event: 'webhook.test',
    created_at: new Date(signedAt).toISOString(),
    livemode: false,
    data: { message: 'A test event.' },
  });
  return {
    method: 'POST',
    path: '/hooks',
    headers: {
      'content-type': 'application/json',
      'x-svc-event': 'webhook.test',
      'x-svc-delivery': randomUUID(),
      'x-svc-timestamp': String(signedAt),
      'x-svc-signature': signatureHeader([SECRET], signedAt, rawBody),
    },
    rawBody,
    bytes: Buffer.from(rawBody),
    receivedAt,
  };
}

/** The problems the check finds with the delivery's signature. */
function signatureProblems(received: ReceivedRequest): string[] {
  return deliveryProblems(document, judge, received, [SECRET]).filter((problem) => problem.includes('signature'));
}

describe('deliveries judged at the end of a long conformance run', () => {
  it('verify against the moment they arrived', () => {
    const signedAt = Date.now() - 20 * MINUTE;
    expect(signatureProblems(delivery(signedAt, signedAt + 200))).toEqual([]);
  });

  it('are still stale when they arrived more than 5 minutes after they were signed', () => {
    const signedAt = Date.now() - 20 * MINUTE;
    expect(signatureProblems(delivery(signedAt, signedAt + 6 * MINUTE))).toEqual([
      'x-svc-signature does not verify with any secret the API returned: timestamp outside the 5-minute tolerance',
    ]);
  });
});
