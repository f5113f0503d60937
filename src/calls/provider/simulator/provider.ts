// The built-in simulated voice provider: stateless, every answer derived from the destination number
// and the placement time, so calls carry on unchanged across restarts and across processes. It pushes
// nothing: each lookup reports the script's events due by then and when the next one is due.
import { randomBytes } from 'node:crypto';
import { planCall, type CallPlan } from './script.js';
import {
  ProviderRefusedError,
  type InboundEvent,
  type LookupResult,
  type PlaceRequest,
  type Placed,
  type ProviderCallRef,
  type StopResult,
  type VoiceProvider,
  type WebhookReading,
} from '../types.js';

function planFor(call: ProviderCallRef, providerCallId: string): CallPlan {
  return planCall(call.toE164, `https://recordings.simulator.example.com/${providerCallId}.mp3`);
}

/** The simulator; one simulated second lasts `secondMs` wall-clock milliseconds (SIMULATOR_STEP_MS). */
export class SimulatedProvider implements VoiceProvider {
  readonly name = 'simulator';
  /** Lookups only read the script: nothing to protect from them. */
  readonly lookupsPerSecond = Number.POSITIVE_INFINITY;
  /** Lookups are computed from the script, in this process. */
  readonly lookupIsLocal = true;

  constructor(readonly secondMs: number) {}

  /**
   * Accepts every number except those ending in 0005, which it refuses with ProviderRefusedError; the
   * first lookup is due at the script's first step.
   */
  place(request: PlaceRequest): Promise<Placed> {
    if (request.toE164.endsWith('0005'))
      return Promise.reject(new ProviderRefusedError('The voice provider refused to place the call.'));
    const providerCallId = `sim_${randomBytes(8).toString('hex')}`;
    const first = planFor({ ...request, providerCallId }, providerCallId).steps[0];
    return Promise.resolve({ providerCallId, nextLookupAt: this.timeOf(request.placedAt, first?.offsetSec ?? 0) });
  }

  /** Nothing to stop: the call only exists in its script. A connected call reports its conversation cut at `at`. */
  stop(call: ProviderCallRef, request: { connected: boolean; at: Date }): Promise<StopResult> {
    return Promise.resolve(this.stopNow(call, request));
  }

  private stopNow(call: ProviderCallRef, request: { connected: boolean; at: Date }): StopResult {
    if (!request.connected || call.providerCallId === null) return { stopped: true, conversation: null };
    const connection = planFor(call, call.providerCallId).connection;
    if (!connection) return { stopped: true, conversation: null };
    const connectedMs = request.at.getTime() - this.timeOf(call.placedAt, connection.atSec).getTime();
    return { stopped: true, conversation: connection.after(Math.max(0, Math.floor(connectedMs / this.secondMs))) };
  }

  /** The simulator sends no webhooks, so none it is shown is genuine. */
  readWebhook(): Promise<WebhookReading> {
    return Promise.resolve({ verified: false, why: 'the simulator sends no webhooks' });
  }

  /**
   * The script's events due by `now` (each keyed by its place in the script) and when the next is due;
   * a call without a provider id was never placed here.
   */
  lookup(call: ProviderCallRef, request: { now: Date }): Promise<LookupResult> {
    return Promise.resolve(this.lookupNow(call, request.now));
  }

  private lookupNow(call: ProviderCallRef, now: Date): LookupResult {
    const providerCallId = call.providerCallId;
    if (providerCallId === null) return { found: false };
    const events: InboundEvent[] = [];
    const steps = planFor(call, providerCallId).steps;
    for (const [index, step] of steps.entries()) {
      const at = this.timeOf(call.placedAt, step.offsetSec);
      if (at > now) return { found: true, providerCallId, events, nextLookupAt: at };
      events.push({
        dedupeKey: `${providerCallId}:${index}`,
        callId: call.callId,
        providerCallId,
        event: { ...step.event, at },
      });
    }
    return { found: true, providerCallId, events, nextLookupAt: null };
  }

  private timeOf(placedAt: Date, offsetSec: number): Date {
    return new Date(placedAt.getTime() + offsetSec * this.secondMs);
  }
}
