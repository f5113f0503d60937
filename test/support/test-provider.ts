// A voice provider that exists only in tests: each test decides how it answers placements, stops and
// lookups, and signs webhooks for it (HMAC-SHA256 over "timestamp.body", a 5-minute window).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  ProviderRefusedError,
  type InboundEvent,
  type LookupResult,
  type PlaceRequest,
  type Placed,
  type ProviderCallRef,
  type ProviderEvent,
  type ProviderModule,
  type StopResult,
  type VoiceProvider,
  type WebhookReading,
} from '../../src/calls/provider/types.js';

const SECRET = 'test-provider-secret';

/** A report as the test provider's webhooks carry it (times as ISO strings). */
export interface WireEvent {
  key: string;
  callId?: string;
  providerCallId?: string;
  event: Record<string, unknown> & { type: string; at: string };
}

/** A controllable provider: set `onPlace`, `stopAnswer` and `known` per test. */
export class TestProvider implements VoiceProvider {
  readonly name = 'testvoice';
  readonly secondMs = 1000;
  /** Tests may lower it to see lookups wait their turn. */
  lookupsPerSecond = 100;
  /** Its lookups stand for a provider's over the network. */
  readonly lookupIsLocal = false;
  /** How placements are answered: accept with a fresh id unless a test says otherwise. */
  onPlace: (request: PlaceRequest) => Promise<Placed> = () =>
    Promise.resolve({ providerCallId: `tv_${randomBytes(6).toString('hex')}`, nextLookupAt: null });
  placements: PlaceRequest[] = [];
  lookups: ProviderCallRef[] = [];
  stopAnswer: StopResult = { stopped: true, conversation: null };
  /** What a lookup finds, by our call id: the provider's id and the call's history. */
  known = new Map<string, { providerCallId: string; events: ProviderEvent[] }>();

  place(request: PlaceRequest): Promise<Placed> {
    this.placements.push(request);
    return this.onPlace(request);
  }

  stop(): Promise<StopResult> {
    return Promise.resolve(this.stopAnswer);
  }

  readWebhook(webhook: {
    rawBody: Buffer;
    headers: Readonly<Record<string, string | undefined>>;
    now: Date;
  }): Promise<WebhookReading> {
    const timestamp = webhook.headers['x-test-timestamp'] ?? '';
    const given = Buffer.from(webhook.headers['x-test-signature'] ?? '', 'hex');
    const expected = createHmac('sha256', SECRET).update(`${timestamp}.`).update(webhook.rawBody).digest();
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return Promise.resolve({ verified: false, why: 'bad signature' });
    if (Math.abs(webhook.now.getTime() / 1000 - Number(timestamp)) > 300)
      return Promise.resolve({ verified: false, why: 'stale' });
    const body = JSON.parse(webhook.rawBody.toString('utf8')) as { events: WireEvent[] };
    return Promise.resolve({ verified: true, events: body.events.map(toInbound) });
  }

  lookup(call: ProviderCallRef): Promise<LookupResult> {
    this.lookups.push(call);
    const known = this.known.get(call.callId);
    if (!known) return Promise.resolve({ found: false });
    const events = known.events.map((event, index) => ({
      dedupeKey: `lookup:${known.providerCallId}:${index}`,
      callId: call.callId,
      providerCallId: known.providerCallId,
      event,
    }));
    return Promise.resolve({ found: true, providerCallId: known.providerCallId, events, nextLookupAt: null });
  }
}

function toInbound(wire: WireEvent): InboundEvent {
  return {
    dedupeKey: wire.key,
    callId: wire.callId ?? null,
    providerCallId: wire.providerCallId ?? null,
    event: { ...wire.event, at: new Date(wire.event.at) } as unknown as ProviderEvent,
  };
}

/** The registry entry of `provider`, for startTestApp's `providers`. */
export function testProviderModule(provider: TestProvider): ProviderModule {
  return { name: provider.name, settings: [], requires: [], create: () => provider };
}

/** A refusal, as a provider answers a number it will not call. */
export function refuse(message: string): never {
  throw new ProviderRefusedError(message);
}

/** Headers signing `body` for the test provider at `atSec` (Unix seconds; now by default), or with `secret`. */
export function signedHeaders(body: string, options: { atSec?: number; secret?: string } = {}): Record<string, string> {
  const timestamp = String(options.atSec ?? Math.floor(Date.now() / 1000));
  const signature = createHmac('sha256', options.secret ?? SECRET)
    .update(`${timestamp}.${body}`)
    .digest('hex');
  return { 'content-type': 'application/json', 'x-test-timestamp': timestamp, 'x-test-signature': signature };
}
