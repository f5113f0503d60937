// The few calls of Vapi's HTTP API the adapter makes (POST /call, GET /call/{id}, the live-call control
// URL), each with a deadline, and what each failure means: a refusal, a busy provider, or an unknown outcome.
import { request } from 'undici';
import type { VapiCall, VapiCreateCall } from './wire.js';

/** Vapi answered that it did not and will not do what was asked (a 4xx, or nothing was ever sent). */
export class VapiRefusedError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** Vapi asked us to slow down (429); nothing was done. `retryAfterMs` is its Retry-After, when given. */
export class VapiRateLimitedError extends Error {
  constructor(readonly retryAfterMs: number | null) {
    super('Vapi answered 429 Too Many Requests.');
  }
}

/** Nobody knows whether Vapi acted: the deadline passed, the connection broke, or Vapi failed (5xx). */
export class VapiUnknownOutcomeError extends Error {}

/** Where and how to reach Vapi. */
export interface VapiClientOptions {
  baseUrl: string;
  apiKey: string;
}

/** The filters of `GET /call` the adapter uses to find a call by our id. */
export interface VapiCallQuery {
  createdAtGe: string;
  createdAtLe: string;
}

/** The most calls one `GET /call` lists (the vendor's maximum `limit`). */
export const CALL_LIST_LIMIT = 1000;

/** Connection errors that prove the request never reached the server. */
const NEVER_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Retry-After as milliseconds (seconds or an HTTP date), or null when absent or unreadable. */
function retryAfterMs(value: string | null, now: Date): number | null {
  if (value === null) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now.getTime());
}

/** The system or undici error code of a failed request, on the error or its cause. */
function errorCode(error: unknown): string | undefined {
  for (let current: unknown = error; current instanceof Error; current = current.cause) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/**
 * A thin client of Vapi's API. Each method takes the caller's deadline as an AbortSignal (it covers the
 * whole exchange, body included) and throws one of the three errors above on failure.
 */
export class VapiClient {
  constructor(private readonly options: VapiClientOptions) {}

  /** `POST /call`: asks Vapi to dial; resolves with the call Vapi created. */
  async createCall(body: VapiCreateCall, signal: AbortSignal): Promise<VapiCall> {
    const response = await this.send('POST', `${this.options.baseUrl}/call`, signal, body);
    // The document says 201; any 2xx means Vapi took the request, so it is never read as a refusal.
    if (response.status >= 200 && response.status < 300) return response.json as VapiCall;
    throw this.failure(response);
  }

  /** `GET /call/{id}`: the call as Vapi knows it, or null when Vapi does not know it (404). */
  async getCall(providerCallId: string, signal: AbortSignal): Promise<VapiCall | null> {
    const url = `${this.options.baseUrl}/call/${encodeURIComponent(providerCallId)}`;
    const response = await this.send('GET', url, signal);
    if (response.status === 200) return response.json as VapiCall;
    if (response.status === 404) return null;
    throw this.failure(response);
  }

  /** `GET /call` with filters: the calls Vapi lists for them (up to CALL_LIST_LIMIT). */
  async listCalls(query: VapiCallQuery, signal: AbortSignal): Promise<VapiCall[]> {
    const search = new URLSearchParams({ ...query, limit: String(CALL_LIST_LIMIT) });
    const response = await this.send('GET', `${this.options.baseUrl}/call?${search}`, signal);
    if (response.status === 200 && Array.isArray(response.json)) return response.json as VapiCall[];
    if (response.status === 200) throw new VapiUnknownOutcomeError('Vapi listed calls in an unexpected shape.');
    throw this.failure(response);
  }

  /** Ends a live call through its control URL (`{ type: "end-call" }`), whatever state it is in. */
  async endCall(controlUrl: string, signal: AbortSignal): Promise<void> {
    // Vapi's control URL is unauthenticated unless an assistant turns on controlAuthenticationEnabled
    // (then it wants the public key): the private API key is never sent there.
    const response = await this.send('POST', controlUrl, signal, { type: 'end-call' }, { withApiKey: false });
    if (response.status >= 200 && response.status < 300) return;
    throw this.failure(response);
  }

  private failure(response: { status: number; retryAfter: string | null }): Error {
    if (response.status === 429) return new VapiRateLimitedError(retryAfterMs(response.retryAfter, new Date()));
    if (response.status >= 500 || response.status === 408)
      return new VapiUnknownOutcomeError(`Vapi answered ${response.status}.`);
    return new VapiRefusedError(`Vapi refused the request with ${response.status}.`, response.status);
  }

  private async send(
    method: string,
    url: string,
    signal: AbortSignal,
    body?: unknown,
    { withApiKey } = { withApiKey: true },
  ): Promise<{ status: number; json: unknown; retryAfter: string | null }> {
    try {
      const response = await request(url, {
        method: method as 'GET' | 'POST',
        signal,
        headers: {
          ...(withApiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.body.text();
      const ok = response.statusCode >= 200 && response.statusCode < 300;
      let json: unknown = null;
      try {
        json = text ? JSON.parse(text) : null;
      } catch {
        if (ok) throw new VapiUnknownOutcomeError(`Vapi answered ${response.statusCode} with a body that is not JSON.`);
      }
      const retryAfter = response.headers['retry-after'];
      return {
        status: response.statusCode,
        json,
        retryAfter: (Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) ?? null,
      };
    } catch (error) {
      if (error instanceof VapiUnknownOutcomeError) throw error;
      const code = errorCode(error);
      if (code && NEVER_SENT.has(code)) throw new VapiRefusedError(`Vapi could not be reached (${code}).`, null);
      if (signal.aborted) throw new VapiUnknownOutcomeError('Vapi did not answer before the deadline.');
      throw new VapiUnknownOutcomeError(`The connection to Vapi failed${code ? ` (${code})` : ''}.`);
    }
  }
}
