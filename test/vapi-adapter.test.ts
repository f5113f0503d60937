// The Vapi adapter on its own: placement, lookup and refusal against a Prism mock of Vapi's pinned
// document; endings, stops and broken exchanges against a scripted fake that checks the vendor's schemas;
// signed server messages (each fixture valid by the vendor's ServerMessage schema) read into events.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ProviderRefusedError,
  ProviderUnknownOutcomeError,
  type InboundEvent,
  type PlaceRequest,
  type ProviderCallRef,
} from '../src/calls/provider/types.js';
import { ENDED_REASONS } from '../src/calls/provider/vapi/ended-reasons.js';
import { VapiProvider } from '../src/calls/provider/vapi/provider.js';
import { startVapiFake, type VapiFake } from './support/vapi-fake.js';
import { startVapiPrism } from './support/vapi-prism.js';
import {
  assertServerMessage,
  conversationFixture,
  endOfCallReport,
  signedHeaders,
  statusUpdate,
  vapiCall,
  vendorEndedReasons,
} from './support/vapi.js';

const SECRET = 'whsec-test-vapi';
const SETTINGS = { assistantId: 'asst-0001', phoneNumberId: 'pn-0001' };

function placeRequest(callId: string, signal = AbortSignal.timeout(5_000)): PlaceRequest {
  return {
    callId,
    toE164: '+919812345678',
    fromE164: '+918045678901',
    language: 'hi-IN',
    maxDurationSec: 300,
    placedAt: new Date(),
    settings: SETTINGS,
    signal,
  };
}

function ref(callId: string, providerCallId: string | null): ProviderCallRef {
  return { callId, providerCallId, toE164: '+919812345678', placedAt: new Date() };
}

function webhook(body: string, at = new Date(), secret = SECRET) {
  return { rawBody: Buffer.from(body), headers: signedHeaders(secret, body, at), now: at };
}

describe('Vapi adapter against a Prism mock of the pinned document', () => {
  let prism: { url: string; stop(): Promise<void> };
  beforeAll(async () => {
    prism = await startVapiPrism();
  }, 90_000);
  afterAll(() => prism?.stop());

  const provider = () => new VapiProvider({ baseUrl: prism.url, apiKey: 'vapi-key', webhookSecret: SECRET });

  it('places a call with a request Prism accepts and reads the call id from its answer', async () => {
    const placed = await provider().place(placeRequest('7f0c5e2a-1111-4c3d-9e8f-000000000001'));
    expect(placed.providerCallId).toEqual(expect.any(String));
    expect(placed.nextLookupAt).toBeNull();
  });

  it('looks a call up by its Vapi id', async () => {
    const found = await provider().lookup(ref('7f0c5e2a-1111-4c3d-9e8f-000000000002', randomLikeUuid()), {
      now: new Date(),
      signal: AbortSignal.timeout(5_000),
    });
    expect(found.found).toBe(true);
  });

  it('finds nothing when searching by our call id among calls that do not carry it', async () => {
    const found = await provider().lookup(ref('7f0c5e2a-1111-4c3d-9e8f-000000000003', null), {
      now: new Date(),
      signal: AbortSignal.timeout(5_000),
    });
    expect(found).toEqual({ found: false });
  });

  it('is refused when Vapi refuses the credential (401)', async () => {
    const noKey = new VapiProvider({ baseUrl: prism.url, apiKey: '', webhookSecret: SECRET });
    await expect(noKey.place(placeRequest('7f0c5e2a-1111-4c3d-9e8f-000000000004'))).rejects.toBeInstanceOf(
      ProviderRefusedError,
    );
  });
});

/** A UUID-shaped id (GET /call/{id} takes a uuid). */
function randomLikeUuid(): string {
  return crypto.randomUUID();
}

describe('Vapi adapter against a scripted Vapi', () => {
  let fake: VapiFake;
  beforeAll(async () => {
    fake = await startVapiFake();
  });
  afterAll(() => fake?.stop());
  afterEach(() => {
    expect(fake.violations).toEqual([]);
  });

  const provider = () => new VapiProvider({ baseUrl: fake.url, apiKey: 'vapi-key', webhookSecret: SECRET });

  it('places with the agent, the number, our call id and our maximum duration', async () => {
    const callId = crypto.randomUUID();
    const placed = await provider().place(placeRequest(callId));
    const sent = fake.received.at(-1)!;
    expect(sent).toMatchObject({ method: 'POST', path: '/call', authorization: 'Bearer vapi-key' });
    expect(sent.body).toEqual({
      assistantId: 'asst-0001',
      phoneNumberId: 'pn-0001',
      customer: { number: '+919812345678' },
      assistantOverrides: {
        metadata: { platformCallId: callId },
        maxDurationSeconds: 300,
        monitorPlan: { controlEnabled: true },
      },
    });
    expect(fake.calls.has(placed.providerCallId)).toBe(true);
  });

  it('leaves the outcome unknown when Vapi answers 500', async () => {
    fake.script('POST /call', { status: 500, body: { message: 'Internal server error' } });
    await expect(provider().place(placeRequest(crypto.randomUUID()))).rejects.toBeInstanceOf(
      ProviderUnknownOutcomeError,
    );
  });

  it('is refused, with the wait Vapi asks for, on 429 with Retry-After', async () => {
    fake.script('POST /call', { status: 429, headers: { 'retry-after': '7' }, body: { message: 'Too Many Requests' } });
    const placing = provider().place(placeRequest(crypto.randomUUID()));
    await expect(placing).rejects.toBeInstanceOf(ProviderRefusedError);
    await expect(placing).rejects.toThrow('Try again in 7 s');
  });

  it('is refused on a validation error (400)', async () => {
    fake.script('POST /call', { status: 400, body: { message: ['customer.number must be a valid phone number'] } });
    const placing = provider().place(placeRequest(crypto.randomUUID()));
    await expect(placing).rejects.toBeInstanceOf(ProviderRefusedError);
    await expect(placing).rejects.toThrow('The voice provider refused to place the call (HTTP 400).');
  });

  it('leaves the outcome unknown when the deadline passes before Vapi answers', async () => {
    fake.script('POST /call', { delayMs: 1_500, act: true, status: 201, body: {} });
    await expect(provider().place(placeRequest(crypto.randomUUID(), AbortSignal.timeout(200)))).rejects.toBeInstanceOf(
      ProviderUnknownOutcomeError,
    );
  });

  it('leaves the outcome unknown when the connection breaks, and then finds the call by our id', async () => {
    const callId = crypto.randomUUID();
    fake.script('POST /call', { destroy: true, act: true });
    await expect(provider().place(placeRequest(callId))).rejects.toBeInstanceOf(ProviderUnknownOutcomeError);
    const found = await provider().lookup(ref(callId, null), { now: new Date(), signal: AbortSignal.timeout(5_000) });
    expect(found).toMatchObject({ found: true });
    const providerCallId = found.found ? found.providerCallId : '';
    expect(fake.calls.get(providerCallId)?.['assistantOverrides']).toMatchObject({
      metadata: { platformCallId: callId },
    });
  });

  it('is refused when Vapi cannot be reached at all (nothing was sent)', async () => {
    const closed = await startVapiFake();
    await closed.stop();
    const unreachable = new VapiProvider({ baseUrl: closed.url, apiKey: 'vapi-key', webhookSecret: SECRET });
    await expect(unreachable.place(placeRequest(crypto.randomUUID()))).rejects.toBeInstanceOf(ProviderRefusedError);
  });

  it('cancels a call before it connects through its control URL', async () => {
    const callId = crypto.randomUUID();
    const { providerCallId } = await provider().place(placeRequest(callId));
    const stopped = await provider().stop(ref(callId, providerCallId), {
      connected: false,
      at: new Date(),
      signal: AbortSignal.timeout(5_000),
    });
    expect(stopped).toEqual({ stopped: true, conversation: null });
    expect(fake.received.at(-1)).toMatchObject({ path: `/control/${providerCallId}`, body: { type: 'end-call' } });
    expect(fake.calls.get(providerCallId)?.['status']).toBe('ended');
  });

  it('hangs up a connected call and reports the conversation so far', async () => {
    const callId = crypto.randomUUID();
    const { providerCallId } = await provider().place(placeRequest(callId));
    const startedAt = new Date(Date.now() - 30_000);
    const { artifact, analysis } = conversationFixture(startedAt, 30);
    Object.assign(fake.calls.get(providerCallId)!, {
      status: 'in-progress',
      startedAt: startedAt.toISOString(),
      artifact,
      analysis,
    });
    const stopped = await provider().stop(ref(callId, providerCallId), {
      connected: true,
      at: new Date(startedAt.getTime() + 30_000),
      signal: AbortSignal.timeout(5_000),
    });
    expect(stopped).toMatchObject({ stopped: true, conversation: { durationSec: 30 } });
  });

  it('cannot stop a call that has ended, or one without a control URL', async () => {
    const callId = crypto.randomUUID();
    const { providerCallId } = await provider().place(placeRequest(callId));
    const call = fake.calls.get(providerCallId)!;
    const request = { connected: false, at: new Date(), signal: AbortSignal.timeout(5_000) };
    delete call['monitor'];
    expect(await provider().stop(ref(callId, providerCallId), request)).toMatchObject({ stopped: false });
    Object.assign(call, { status: 'ended', endedReason: 'customer-ended-call' });
    expect(await provider().stop(ref(callId, providerCallId), request)).toEqual({
      stopped: false,
      message: 'The call has already ended at Vapi.',
    });
  });

  it('reports a call Vapi does not know as not found', async () => {
    const found = await provider().lookup(ref(crypto.randomUUID(), crypto.randomUUID()), {
      now: new Date(),
      signal: AbortSignal.timeout(5_000),
    });
    expect(found).toEqual({ found: false });
  });

  it('reconciles a call whose webhooks never came from GET /call/{id}', async () => {
    const callId = crypto.randomUUID();
    const { providerCallId } = await provider().place(placeRequest(callId));
    const startedAt = new Date(Date.now() - 60_000);
    const { artifact, analysis, endedAt } = conversationFixture(startedAt, 42);
    Object.assign(fake.calls.get(providerCallId)!, {
      status: 'ended',
      endedReason: 'customer-ended-call',
      startedAt: startedAt.toISOString(),
      endedAt,
      artifact,
      analysis,
    });
    const found = await provider().lookup(ref(callId, providerCallId), {
      now: new Date(),
      signal: AbortSignal.timeout(5_000),
    });
    expect(found).toMatchObject({
      found: true,
      providerCallId,
      events: [
        {
          dedupeKey: `${providerCallId}:end-of-call-report`,
          callId,
          providerCallId,
          event: {
            type: 'ended',
            ending: {
              status: 'completed',
              conversation: {
                durationSec: 42,
                recordingUrl: 'https://storage.vapi.example/recordings/one.wav',
                analysis: { intent: 'book_demo', sentiment: 'positive', outcome: 'demo_booked' },
              },
            },
          },
        },
      ],
    });
  });
});

describe('Vapi server messages', () => {
  const provider = new VapiProvider({ baseUrl: 'http://127.0.0.1:9', apiKey: 'unused', webhookSecret: SECRET });
  const callId = '5b9e8d36-2f7b-4c61-9a57-0c1b7f0e0a01';
  const providerCallId = '0c7a7b1e-94d3-4f5a-8a0e-6d2a1f3e9b02';
  const call = vapiCall(providerCallId, callId);

  async function events(body: string): Promise<InboundEvent[]> {
    const reading = await provider.readWebhook(webhook(body));
    if (!reading.verified) throw new Error(`refused: ${reading.why}`);
    return reading.events;
  }

  it.each([
    ['queued', 'dialing'],
    ['ringing', 'ringing'],
    ['in-progress', 'in_progress'],
  ])("reads status %s as %s, tied to our call and Vapi's", async (vendor, ours) => {
    const at = new Date('2026-11-29T10:00:05.000Z');
    expect(await events(statusUpdate(call, vendor, at))).toEqual([
      {
        dedupeKey: `${providerCallId}:status:${vendor}`,
        callId,
        providerCallId,
        event: { type: 'status', at, status: ours },
      },
    ]);
  });

  it('reads scheduled, forwarding and ended status updates, and other message types, as nothing', async () => {
    const at = new Date();
    for (const status of ['scheduled', 'forwarding', 'ended'])
      expect(
        await events(statusUpdate(call, status, at, status === 'ended' ? { endedReason: 'customer-busy' } : {})),
      ).toEqual([]);
    const speech = { message: { type: 'speech-update', status: 'started', role: 'user' } };
    assertServerMessage(speech);
    expect(await events(JSON.stringify(speech))).toEqual([]);
  });

  it('builds its fixtures only in shapes the vendor schema accepts', () => {
    // Vapi has no "dialing" status; the fixture helper refuses to build a message the vendor would not send.
    expect(() => statusUpdate(call, 'dialing', new Date())).toThrow('not a Vapi ServerMessage');
    expect(() => endOfCallReport(call, 'customer-hung-up', new Date())).toThrow('not a Vapi ServerMessage');
  });

  it('gives a redelivered report the same key', async () => {
    const body = statusUpdate(call, 'ringing', new Date());
    const [first] = await events(body);
    const [second] = await events(body);
    expect(second!.dedupeKey).toBe(first!.dedupeKey);
  });

  const startedAt = new Date('2026-11-29T10:00:10.000Z');
  it.each([
    ['customer-ended-call', { status: 'completed', reason: null }],
    ['exceeded-max-duration', { status: 'completed', reason: null }],
    ['customer-busy', { status: 'busy', reason: 'busy', conversation: null }],
    ['customer-did-not-answer', { status: 'no_answer', reason: 'no_answer', conversation: null }],
    ['voicemail', { status: 'no_answer', reason: 'no_answer', conversation: null }],
    ['twilio-failed-to-connect-call', { status: 'failed', reason: 'carrier_rejected' }],
    ['call.in-progress.error-providerfault-outbound-sip-408-request-timeout', { status: 'failed', reason: 'timeout' }],
    ['pipeline-error-openai-llm-failed', { status: 'failed', reason: 'provider_error' }],
  ])('reads an end-of-call report ending %s', async (endedReason, ending) => {
    const seconds = endedReason === 'exceeded-max-duration' ? 300 : 47;
    const connected = ending.status === 'completed' || ending.status === 'failed';
    const body = endOfCallReport(
      call,
      endedReason,
      new Date(startedAt.getTime() + seconds * 1000),
      connected ? conversationFixture(startedAt, seconds) : {},
    );
    const [event] = await events(body);
    expect(event).toMatchObject({ dedupeKey: `${providerCallId}:end-of-call-report`, callId, providerCallId });
    expect(event!.event).toMatchObject({ type: 'ended', ending });
    if (!connected) return;
    expect(event!.event).toMatchObject({
      at: new Date(startedAt.getTime() + seconds * 1000),
      ending: {
        conversation: {
          durationSec: seconds,
          recordingUrl: 'https://storage.vapi.example/recordings/one.wav',
          transcript: [
            { role: 'agent', text: 'Hello, is this a good time?', start_ms: 500, end_ms: 2500 },
            { role: 'contact', text: 'Yes, go ahead.', start_ms: 3000, end_ms: 4000 },
          ],
          analysis: { intent: 'book_demo', sentiment: 'positive', outcome: 'demo_booked' },
        },
      },
    });
  });

  it('ends a call as the table says for every endedReason in the vendor document', async () => {
    const mismatches: string[] = [];
    for (const endedReason of vendorEndedReasons()) {
      const [event] = await events(endOfCallReport(call, endedReason, new Date(), conversationFixture(startedAt, 30)));
      const expected = ENDED_REASONS.get(endedReason)!;
      const ending = event?.event.type === 'ended' ? event.event.ending : null;
      const reason =
        expected.status === 'failed' ? expected.reason : expected.status === 'completed' ? null : expected.status;
      if (ending?.status !== expected.status || ending.reason !== reason) mismatches.push(endedReason);
    }
    expect(mismatches).toEqual([]);
  });

  it('takes successEvaluation as the outcome when the structured data has none, and drops unknown sentiments', async () => {
    const fixture = conversationFixture(startedAt, 20);
    const body = endOfCallReport(call, 'assistant-ended-call', new Date(), {
      ...fixture,
      analysis: { structuredData: { intent: 'pricing_question', sentiment: 'ecstatic' }, successEvaluation: 'pass' },
    });
    const [event] = await events(body);
    expect(event!.event).toMatchObject({
      ending: { conversation: { analysis: { intent: 'pricing_question', sentiment: null, outcome: 'pass' } } },
    });
  });

  it('refuses a wrong, missing or stale signature before reading the body', async () => {
    const body = statusUpdate(call, 'ringing', new Date());
    const now = new Date();
    expect(await provider.readWebhook(webhook(body, now, 'another-secret'))).toEqual({
      verified: false,
      why: 'signature mismatch',
    });
    expect(await provider.readWebhook({ rawBody: Buffer.from(body), headers: {}, now })).toEqual({
      verified: false,
      why: 'signature missing',
    });
    const signedLongAgo = webhook(body, new Date(now.getTime() - 6 * 60 * 1000));
    expect(await provider.readWebhook({ ...signedLongAgo, now })).toEqual({ verified: false, why: 'signature stale' });
    const tampered = webhook(body, now);
    expect(
      await provider.readWebhook({ ...tampered, rawBody: Buffer.from(body.replace('ringing', 'queued')) }),
    ).toEqual({
      verified: false,
      why: 'signature mismatch',
    });
  });

  it('accepts a signature made within the window on either side of our clock', async () => {
    const body = statusUpdate(call, 'ringing', new Date());
    const now = new Date();
    for (const skew of [-4 * 60 * 1000, 4 * 60 * 1000]) {
      const signed = webhook(body, new Date(now.getTime() + skew));
      expect(await provider.readWebhook({ ...signed, now })).toMatchObject({ verified: true });
    }
  });

  it('acknowledges a verified body it cannot use with no events', async () => {
    expect(await provider.readWebhook(webhook('not json'))).toEqual({ verified: true, events: [] });
    // A status update that names no call (the vendor's schema allows it) ties to nothing.
    const anonymous = { message: { type: 'status-update', status: 'ringing' } };
    assertServerMessage(anonymous);
    expect(await provider.readWebhook(webhook(JSON.stringify(anonymous)))).toEqual({ verified: true, events: [] });
  });
});
