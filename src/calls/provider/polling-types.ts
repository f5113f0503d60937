// The poll-based contract the simulator and lifecycle still use while they move to types.ts (removed then).
import type { components } from '../../../generated/openapi.js';

type Schemas = components['schemas'];
type TranscriptTurn = Schemas['TranscriptTurn'];

/** What the platform asks the provider to dial. */
export interface PlaceRequest {
  callId: string;
  toE164: string;
  fromE164: string;
  language: string;
  /** When the call is placed (its `created_at`). */
  placedAt: Date;
}

/** The facts about a placed call that the provider needs to answer questions about it. */
export interface ProviderCallRef {
  providerCallId: string;
  toE164: string;
  /** When the call was placed; the provider's event times are measured from here. */
  placedAt: Date;
}

/** The language-model reading of a conversation. */
export interface CallAnalysis {
  intent: string | null;
  sentiment: Schemas['CallSentiment'] | null;
  outcome: string | null;
}

/** What a connected call produced by the time it ended. */
export interface Conversation {
  durationSec: number;
  recordingUrl: string | null;
  transcript: TranscriptTurn[];
  analysis: CallAnalysis;
}

/** How the provider says a call ended (never `canceled`: only the platform cancels). */
export type ProviderEnding =
  | { status: 'completed'; reason: null; conversation: Conversation }
  | { status: 'failed'; reason: Schemas['CallFailureReason']; conversation: Conversation | null }
  | { status: 'busy'; reason: 'busy'; conversation: null }
  | { status: 'no_answer'; reason: 'no_answer'; conversation: null };

/** One thing the provider reports about a call, at the moment it happened. */
export type ProviderEvent =
  | { type: 'status'; at: Date; status: 'dialing' | 'ringing' | 'in_progress' }
  | { type: 'disclosure-played'; at: Date; detail: Schemas['DisclosurePlayedDetail'] }
  | { type: 'intent-detected'; at: Date; detail: Schemas['IntentDetectedDetail'] }
  | { type: 'handoff-requested'; at: Date; detail: Schemas['HandoffRequestedDetail'] }
  | { type: 'ended'; at: Date; ending: ProviderEnding };

/** A batch of events in the order they happened, and when the next one is due (null: none will come). */
export interface ProviderProgress {
  events: ProviderEvent[];
  nextAt: Date | null;
}

/** The provider refused the request; the client sees upstream_error. */
export class ProviderRefusedError extends Error {}

/**
 * A voice provider. `place` runs inside the placement transaction, so it must answer quickly.
 * Progress is pulled with `poll` by the call-progress worker, which keeps the cursor in the database.
 */
export interface VoiceProvider {
  /** The name stored in `provider` on every call it carries. */
  readonly name: string;
  /** Wall-clock milliseconds in one billed second of a call (1000 unless the provider compresses time). */
  readonly secondMs: number;
  /**
   * Starts dialing; returns the provider's id for the call and when its progress is first worth asking
   * for (the call-progress worker leaves the call alone until then). Throws ProviderRefusedError when refused.
   */
  place(request: PlaceRequest): Promise<{ providerCallId: string; firstPollAt: Date }>;
  /** The events after the first `cursor` ones that happened by `now`. Throws on transport failures. */
  poll(call: ProviderCallRef, cursor: number, now: Date): Promise<ProviderProgress>;
  /** Stops a call that has not connected. Throws on transport failures. */
  cancel(call: ProviderCallRef): Promise<void>;
  /** Hangs up a connected call at `at` and reports what it produced. Throws on transport failures. */
  hangUp(call: ProviderCallRef, at: Date): Promise<Conversation>;
}
