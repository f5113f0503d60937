// One HTTP POST of a delivery with ky: 10-second timeout, no retries, redirects not followed, and at
// most the first 500 characters of the answer read (the rest of the stream is cancelled, not buffered).
import ky, { type Options } from 'ky';
import type { Dispatcher } from 'undici';
import { DELIVERY_TIMEOUT_MS, RESPONSE_EXCERPT_CHARS as EXCERPT_CHARS } from '../policy.js';
import { GuardError } from './guarded-agent.js';

/** What the receiver answered. */
export interface HttpAnswer {
  status: number;
  retryAfter: string | null;
  excerpt: string;
}

/** Text safe to store: at most `max` characters (code points), without NUL characters. */
export function excerptOf(text: string, max = EXCERPT_CHARS): string {
  return Array.from(text.replace(/\u0000/g, ''))
    .slice(0, max)
    .join('');
}

async function readExcerpt(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (!body) return '';
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < EXCERPT_CHARS * 2) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // A body cut short (reset, deadline) keeps what arrived.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return excerptOf(text);
}

/**
 * The fetch ky calls: it adds the body itself. ky is given no body on purpose: it would wrap it in a
 * stream, tee that stream to keep a copy for retries, and, when fetch refuses the request before
 * reading the body (fetch's blocked "bad port" list, for one), wait for ever on cancelling the copy,
 * so the attempt would only end at the 10-second deadline and be logged as taking that long.
 */
function fetchWithBody(body: string, dispatcher: Dispatcher): typeof fetch {
  return async (input) => {
    const request = input as Request;
    const init: RequestInit & { dispatcher: Dispatcher } = {
      method: request.method,
      headers: request.headers,
      body,
      redirect: request.redirect,
      signal: request.signal,
      dispatcher,
    };
    try {
      return await fetch(request.url, init);
    } catch (error) {
      throw refusalByFetch(error, request.url) ?? error;
    }
  };
}

/**
 * fetch refuses some ports outright (the Fetch standard's port blocking: 9, 25, 6000...) without
 * contacting the host. That is a sending policy, like the address guard, so it is reported as one
 * (failure kind `guard`) with a message that says what happened.
 */
function refusalByFetch(error: unknown, url: string): GuardError | null {
  const cause = error instanceof TypeError ? (error.cause as { message?: unknown } | undefined) : undefined;
  if (cause?.message !== 'bad port') return null;
  const { port } = new URL(url);
  return new GuardError(`port ${port} is on fetch's list of blocked ports; the request was not sent`);
}

/**
 * POSTs `body` to `url` through `dispatcher`. Resolves with the answer whatever its status (a 3xx is
 * returned, not followed); rejects with the transport error (timeout, refused, TLS, guard...).
 * `signal` aborts the attempt; the whole attempt, body excerpt included, ends within the timeout.
 */
export async function postDelivery(
  dispatcher: Dispatcher,
  url: string,
  headers: Record<string, string>,
  body: string,
  signal?: AbortSignal,
): Promise<HttpAnswer> {
  const deadline = AbortSignal.timeout(DELIVERY_TIMEOUT_MS);
  const options: Options = {
    headers,
    timeout: DELIVERY_TIMEOUT_MS,
    retry: 0,
    redirect: 'manual',
    throwHttpErrors: false,
    fetch: fetchWithBody(body, dispatcher),
    signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
  };
  const response = await ky.post(url, options);
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    excerpt: await readExcerpt(response.body),
  };
}
