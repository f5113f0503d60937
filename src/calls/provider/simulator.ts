// The built-in simulated voice provider: stateless, every answer derived from the destination number
// and the placement time, so calls carry on unchanged across restarts and across processes.
import { randomBytes } from 'node:crypto';
import { planCall, type CallPlan } from './simulator-script.js';
import {
  ProviderRefusedError,
  type Conversation,
  type PlaceRequest,
  type ProviderCallRef,
  type ProviderEvent,
  type ProviderProgress,
  type VoiceProvider,
} from './types.js';

function planFor(call: ProviderCallRef): CallPlan {
  return planCall(call.toE164, `https://recordings.simulator.example.com/${call.providerCallId}.mp3`);
}

/** The simulator; one simulated second lasts `secondMs` wall-clock milliseconds (SIMULATOR_STEP_MS). */
export class SimulatedProvider implements VoiceProvider {
  readonly name = 'simulator';

  constructor(readonly secondMs: number) {}

  /**
   * Accepts every number except those ending in 0005, which it refuses with ProviderRefusedError; the
   * first progress is due at the script's first step.
   */
  place(request: PlaceRequest): Promise<{ providerCallId: string; firstPollAt: Date }> {
    if (request.toE164.endsWith('0005'))
      return Promise.reject(new ProviderRefusedError('The voice provider refused to place the call.'));
    const providerCallId = `sim_${randomBytes(8).toString('hex')}`;
    const first = planFor({ providerCallId, toE164: request.toE164, placedAt: request.placedAt }).steps[0];
    return Promise.resolve({
      providerCallId,
      firstPollAt: this.timeOf({ placedAt: request.placedAt }, first?.offsetSec ?? 0),
    });
  }

  /** The scripted events after the first `cursor` that are due by `now`. Never throws. */
  poll(call: ProviderCallRef, cursor: number, now: Date): Promise<ProviderProgress> {
    const events: ProviderEvent[] = [];
    for (const step of planFor(call).steps.slice(cursor)) {
      const at = this.timeOf(call, step.offsetSec);
      if (at > now) return Promise.resolve({ events, nextAt: at });
      events.push({ ...step.event, at });
    }
    return Promise.resolve({ events, nextAt: null });
  }

  /** Nothing to stop: a simulated call only exists in its script. Never throws. */
  async cancel(): Promise<void> {}

  /** The conversation cut at `at`. Throws when the number's script never connects. */
  hangUp(call: ProviderCallRef, at: Date): Promise<Conversation> {
    const connection = planFor(call).connection;
    if (!connection) return Promise.reject(new Error(`the simulated call ${call.providerCallId} never connects`));
    const connectedMs = at.getTime() - this.timeOf(call, connection.atSec).getTime();
    return Promise.resolve(connection.after(Math.max(0, Math.floor(connectedMs / this.secondMs))));
  }

  private timeOf(call: Pick<ProviderCallRef, 'placedAt'>, offsetSec: number): Date {
    return new Date(call.placedAt.getTime() + offsetSec * this.secondMs);
  }
}
