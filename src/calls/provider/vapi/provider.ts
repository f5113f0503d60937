// Vapi as a VoiceProvider: places calls with POST /call, stops them through the call's control URL,
// reads its signed server messages, and looks calls up with GET /call for reconciliation.
import {
  ProviderRefusedError,
  ProviderUnknownOutcomeError,
  type InboundWebhook,
  type LookupResult,
  type PlaceRequest,
  type Placed,
  type ProviderCallRef,
  type StopResult,
  type VoiceProvider,
  type WebhookReading,
} from '../types.js';
import {
  CALL_LIST_LIMIT,
  VapiClient,
  VapiRateLimitedError,
  VapiRefusedError,
  VapiUnknownOutcomeError,
} from './client.js';
import { conversationOf } from './conversation.js';
import { CALL_ID_KEY, eventsOfCall, eventsOfMessage, platformCallId } from './events.js';
import { verifyVapiSignature } from './signature.js';
import { ENDED_REASONS } from './ended-reasons.js';
import type { VapiCall, VapiServerMessageBody } from './wire.js';
import type { Logger } from 'pino';

/** What the adapter needs from the configuration. */
export interface VapiProviderOptions {
  baseUrl: string;
  apiKey: string;
  webhookSecret: string;
  /** Lookups a second this process may make (reconciliation's rate limit). */
  lookupsPerSecond?: number;
  /** Where an endedReason missing from the table is reported. */
  logger?: Pick<Logger, 'warn'>;
}

/**
 * The stretch of Vapi's call list a lookup by our call id searches: from a little before the placement
 * (clock skew) to well after its deadline.
 */
const FIND_BEFORE_MS = 60 * 1000;
const FIND_AFTER_MS = 5 * 60 * 1000;

/** The agent setting a call needs, or a refusal naming it (the core checks them first; this is a guard). */
function setting(call: PlaceRequest, key: string): string {
  const value = call.settings[key];
  if (!value) throw new ProviderRefusedError(`The agent has no Vapi ${key} configured.`);
  return value;
}

/**
 * Whether a control URL from Vapi's answer may receive our request (and API key): https on vapi.ai or
 * one of its subdomains, or the configured API's own origin (a mock or proxy the operator chose).
 */
function isVapiControlUrl(value: string, baseUrl: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.username !== '' || url.password !== '') return false;
  if (url.origin === new URL(baseUrl).origin) return true;
  const vapiHost = url.hostname === 'vapi.ai' || url.hostname.endsWith('.vapi.ai');
  return url.protocol === 'https:' && url.port === '' && vapiHost;
}

/** The Vapi voice provider. */
export class VapiProvider implements VoiceProvider {
  readonly name = 'vapi';
  readonly secondMs = 1000;
  readonly lookupsPerSecond: number;
  readonly lookupIsLocal = false;
  private readonly client: VapiClient;

  constructor(private readonly options: VapiProviderOptions) {
    this.client = new VapiClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
    this.lookupsPerSecond = options.lookupsPerSecond ?? 5;
  }

  /**
   * POST /call with the agent's assistant and phone number, our call id in the assistant's metadata and
   * our max_duration_sec as Vapi's maxDurationSeconds. Refusals (4xx, 429, Vapi unreachable) throw
   * ProviderRefusedError; a timeout, a broken connection or a 5xx leaves the outcome unknown.
   */
  async place(request: PlaceRequest): Promise<Placed> {
    try {
      const call = await this.client.createCall(
        {
          assistantId: setting(request, 'assistantId'),
          phoneNumberId: setting(request, 'phoneNumberId'),
          customer: { number: request.toE164 },
          assistantOverrides: {
            metadata: { [CALL_ID_KEY]: request.callId },
            maxDurationSeconds: request.maxDurationSec,
            monitorPlan: { controlEnabled: true },
          },
        },
        request.signal,
      );
      if (typeof call?.id !== 'string' || call.id === '')
        throw new ProviderUnknownOutcomeError('Vapi accepted the call without naming it.');
      return { providerCallId: call.id, nextLookupAt: null };
    } catch (error) {
      throw this.placementError(error);
    }
  }

  /**
   * Ends the call through its control URL (`end-call`), which Vapi offers before and after the call
   * connects; a call that has ended or has no control URL cannot be stopped.
   */
  async stop(
    call: ProviderCallRef,
    request: { connected: boolean; at: Date; signal: AbortSignal },
  ): Promise<StopResult> {
    const found = await this.find(call, request.signal);
    if (!found) return { stopped: false, message: 'Vapi does not know this call.' };
    if (found.status === 'ended') return { stopped: false, message: 'The call has already ended at Vapi.' };
    const controlUrl = found.monitor?.controlUrl;
    if (!controlUrl)
      return { stopped: false, message: 'Vapi offers no control URL for this call, so it cannot be stopped.' };
    if (!isVapiControlUrl(controlUrl, this.options.baseUrl))
      return { stopped: false, message: 'Vapi named a control URL off its own hosts, so the call cannot be stopped.' };
    await this.client.endCall(controlUrl, request.signal);
    const conversation = request.connected ? conversationOf({ ...found, endedAt: request.at.toISOString() }) : null;
    return { stopped: true, conversation };
  }

  /** Verifies the HMAC signature before reading the body; then the body's status and end reports as events. */
  readWebhook(webhook: InboundWebhook): Promise<WebhookReading> {
    return Promise.resolve(this.readWebhookNow(webhook));
  }

  private readWebhookNow(webhook: InboundWebhook): WebhookReading {
    const refusal = verifyVapiSignature(
      { body: webhook.rawBody, header: (name) => webhook.headers[name] },
      this.options.webhookSecret,
      webhook.now,
    );
    if (refusal) return { verified: false, why: `signature ${refusal}` };
    let body: VapiServerMessageBody;
    try {
      body = JSON.parse(webhook.rawBody.toString('utf8')) as VapiServerMessageBody;
    } catch {
      return { verified: true, events: [] };
    }
    const message = body && typeof body === 'object' ? body.message : undefined;
    if (!message || typeof message !== 'object') return { verified: true, events: [] };
    this.warnIfUnknown(message.endedReason);
    return { verified: true, events: eventsOfMessage(message, webhook.now) };
  }

  /** GET /call/{id}, or a search by our call id when the placement's outcome was unknown. */
  async lookup(call: ProviderCallRef, request: { now: Date; signal: AbortSignal }): Promise<LookupResult> {
    const found = await this.find(call, request.signal);
    if (!found) return { found: false };
    this.warnIfUnknown(found.endedReason);
    return { found: true, providerCallId: found.id, events: eventsOfCall(found, request.now), nextLookupAt: null };
  }

  /** Logs an endedReason Vapi added after the pinned document (the call ends failed, provider_error). */
  private warnIfUnknown(endedReason: unknown): void {
    if (typeof endedReason === 'string' && !ENDED_REASONS.has(endedReason))
      this.options.logger?.warn({ endedReason }, 'Vapi sent an endedReason the mapping table does not list');
  }

  private async find(call: ProviderCallRef, signal: AbortSignal): Promise<VapiCall | null> {
    try {
      if (call.providerCallId) return await this.client.getCall(call.providerCallId, signal);
      const calls = await this.client.listCalls(
        {
          createdAtGe: new Date(call.placedAt.getTime() - FIND_BEFORE_MS).toISOString(),
          createdAtLe: new Date(call.placedAt.getTime() + FIND_AFTER_MS).toISOString(),
        },
        signal,
      );
      const match = calls.find((candidate) => platformCallId(candidate) === call.callId);
      // A full page may have left ours out: only a shorter list proves Vapi never made the call.
      if (!match && calls.length >= CALL_LIST_LIMIT)
        throw new VapiUnknownOutcomeError('Vapi listed a full page of calls without ours; it may be on a later one.');
      return match ?? null;
    } catch (error) {
      if (error instanceof VapiRefusedError && error.status === 404) return null;
      throw error;
    }
  }

  private placementError(error: unknown): Error {
    if (error instanceof ProviderRefusedError || error instanceof ProviderUnknownOutcomeError) return error;
    if (error instanceof VapiRefusedError)
      return new ProviderRefusedError(
        error.status === null
          ? 'The voice provider could not be reached; the call was not placed.'
          : `The voice provider refused to place the call (HTTP ${error.status}).`,
      );
    if (error instanceof VapiRateLimitedError) {
      const wait = error.retryAfterMs === null ? '' : ` Try again in ${Math.ceil(error.retryAfterMs / 1000)} s.`;
      return new ProviderRefusedError(`The voice provider is rate-limiting calls.${wait}`);
    }
    if (error instanceof VapiUnknownOutcomeError) return new ProviderUnknownOutcomeError(error.message);
    return new ProviderUnknownOutcomeError(error instanceof Error ? error.message : String(error));
  }
}
