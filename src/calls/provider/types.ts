// The voice-provider contract: place a call, stop it, turn the provider's inbound webhooks into
// provider-neutral events, and look a call up for reconciliation. Nothing here knows a vendor.
import type { Logger } from 'pino';
import type { components } from '../../../generated/openapi.js';
import type { Config } from '../../config.js';

type Schemas = components['schemas'];
type TranscriptTurn = Schemas['TranscriptTurn'];

/** An agent's settings for its provider (Vapi: assistantId, phoneNumberId), stored on the agent. */
export type ProviderSettings = Readonly<Record<string, string>>;

/** What the platform asks the provider to dial. */
export interface PlaceRequest {
  /** Our call id: carry it through so every later report can be tied back to the call. */
  callId: string;
  toE164: string;
  fromE164: string;
  language: string;
  maxDurationSec: number;
  /** When the call is placed (its `created_at`). */
  placedAt: Date;
  /** The agent's settings for this provider. */
  settings: ProviderSettings;
  /** Aborted when the placement's deadline (PROVIDER_TIMEOUT_MS) passes; stop waiting then. */
  signal: AbortSignal;
}

/** What the provider answered to a placement it accepted. */
export interface Placed {
  providerCallId: string;
  /**
   * When the call is first worth looking up (a provider that pushes nothing, like the simulator, says
   * when its next report is due); null: only after PROVIDER_RECONCILE_AFTER_S without news.
   */
  nextLookupAt: Date | null;
}

/** The facts about a call the provider needs to answer questions about it. */
export interface ProviderCallRef {
  callId: string;
  /** Null when the placement's outcome is unknown (timeout, reset): look the call up by `callId`. */
  providerCallId: string | null;
  toE164: string;
  /** When the call was placed; the provider's event times may be measured from here. */
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
  /** Connected seconds (billed); from the provider's start and end of the conversation. */
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

/**
 * One thing the provider reports about a call, at the moment it happened. The lifecycle applies them
 * forward-only: a status behind the call's current one, or anything after its end, changes nothing.
 */
export type ProviderEvent =
  | { type: 'status'; at: Date; status: 'dialing' | 'ringing' | 'in_progress' }
  | { type: 'disclosure-played'; at: Date; detail: Schemas['DisclosurePlayedDetail'] }
  | { type: 'intent-detected'; at: Date; detail: Schemas['IntentDetectedDetail'] }
  | { type: 'handoff-requested'; at: Date; detail: Schemas['HandoffRequestedDetail'] }
  | { type: 'ended'; at: Date; ending: ProviderEnding };

/** A provider event with what ties it to a call and the key it is stored under once. */
export interface InboundEvent {
  /** Unique among this provider's events: the same report delivered twice has the same key. */
  dedupeKey: string;
  /** Our call id when the provider carried it through; else null. */
  callId: string | null;
  /** The provider's call id when the report names it; else null. At least one of the two is set. */
  providerCallId: string | null;
  event: ProviderEvent;
}

/** An inbound webhook as the HTTP layer received it, before anything in it is trusted. */
export interface InboundWebhook {
  rawBody: Buffer;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | undefined>>;
  now: Date;
}

/**
 * What a webhook turned out to be: refused (bad, missing or stale signature: 401, nothing stored),
 * or verified, with the events it carries (none for messages that say nothing about a call's progress).
 */
export type WebhookReading = { verified: false; why: string } | { verified: true; events: InboundEvent[] };

/** What a lookup found: the call as the provider knows it now, or that it does not know it. */
export type LookupResult =
  | { found: false }
  | {
      found: true;
      providerCallId: string;
      /** The call's history so far, oldest first; the lifecycle skips what it has already applied. */
      events: InboundEvent[];
      /** As in Placed: when the call is next worth looking up, null for "when it goes quiet". */
      nextLookupAt: Date | null;
    };

/** What a stop request came to. */
export type StopResult =
  /** Stopped; for a connected call, what the conversation produced so far when the provider knows it now. */
  | { stopped: true; conversation: Conversation | null }
  /** The provider cannot stop this call (POST /calls/{id}/cancel answers invalid_state with `message`). */
  | { stopped: false; message: string };

/**
 * The provider definitely did not take the request (validation error, 4xx, 429, refused number): no call
 * exists, so a placement is voided and answers upstream_error with this message.
 */
export class ProviderRefusedError extends Error {}

/**
 * Anything else a provider method throws (timeout, reset connection, abort, 5xx) means "outcome unknown":
 * a placement is then reconciled with `lookup`, never dialed again. Adapters may throw this to say so
 * explicitly; any other error is treated the same way.
 */
export class ProviderUnknownOutcomeError extends Error {}

/**
 * A voice provider. No method runs inside a database transaction; each one that goes over the network
 * takes an AbortSignal and must stop waiting when it fires.
 */
export interface VoiceProvider {
  /** The name stored in `provider` on every call it carries and used in its webhook URL. */
  readonly name: string;
  /** Wall-clock milliseconds in one billed second of a call (1000 unless the provider compresses time). */
  readonly secondMs: number;
  /** The most lookups a second this process makes to the provider (reconciliation is rate-limited). */
  readonly lookupsPerSecond: number;
  /**
   * True when `lookup` works out its answer in this process, with no network and no wait (the simulator's
   * script). Only such a lookup may run while the call's row is locked in a transaction.
   */
  readonly lookupIsLocal: boolean;
  /**
   * Starts dialing. Throws ProviderRefusedError when the provider definitely did not place the call;
   * anything else thrown (or an abort) leaves the outcome unknown.
   */
  place(request: PlaceRequest): Promise<Placed>;
  /**
   * Stops a call: cancels it before it connects (`connected` false), hangs it up after. Answers
   * `{stopped: false}` when the provider cannot stop it. Throws on transport failures.
   */
  stop(call: ProviderCallRef, request: { connected: boolean; at: Date; signal: AbortSignal }): Promise<StopResult>;
  /**
   * Verifies an inbound webhook (signature, freshness against `now`) before reading anything else in
   * it, then parses it into events. Never throws for a bad request: a verified body it cannot use
   * yields no events.
   */
  readWebhook(webhook: InboundWebhook): Promise<WebhookReading>;
  /**
   * Looks a call up by its provider id, or by our call id when that is null. Throws on transport failures
   * (the reconciliation worker tries again later).
   */
  lookup(call: ProviderCallRef, request: { now: Date; signal: AbortSignal }): Promise<LookupResult>;
}

/** One setting an agent of the provider must carry, and its flag on `admin agent create|update`. */
export interface ProviderSettingSpec {
  /** The key in the agent's stored settings (camelCase, e.g. assistantId). */
  key: string;
  /** The CLI flag without its dashes (e.g. assistant-id). */
  flag: string;
  description: string;
}

/**
 * What is known of a provider without loading its client: its name, its agents' settings and the
 * configuration it needs. A provider's folder exports one (descriptor.ts); src/calls/provider/catalog.ts
 * lists them.
 */
export interface ProviderDescriptor {
  readonly name: string;
  /** The settings each agent using it must carry (all required, non-empty strings). */
  readonly settings: readonly ProviderSettingSpec[];
  /** The environment variables it needs, named in the start-up log and in refusals when missing. */
  readonly requires: readonly string[];
}

/** A provider's descriptor and its factory; a provider's folder exports one (index.ts), src/calls/provider/registry.ts lists them. */
export interface ProviderModule extends ProviderDescriptor {
  /** The provider for this process, or null when the configuration lacks what it needs. */
  create(config: Config, context: { logger: Logger }): VoiceProvider | null;
}
