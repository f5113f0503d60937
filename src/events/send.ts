// One HTTP POST of a delivery with ky: 10-second timeout, no retries, redirects not followed, and at
// most the first 500 characters of the answer read (the rest of the stream is cancelled, not buffered).
import ky, { type Options } from 'ky';
import type { Dispatcher } from 'undici';

/** How long a receiver has to answer. */
const DELIVERY_TIMEOUT_MS = 10_000;

/** How much of a response body the delivery log keeps. */
const EXCERPT_CHARS = 500;

/** What the receiver answered. */
export interface HttpAnswer {
  status: number;
  retryAfter: string | null;
  excerpt: string;
}

/** Text safe to store: at most `max` characters (code points), without NUL characters. */
export function excerptOf(text: string, max = EXCERPT_CHARS): string {
  return Array.from(text.replace(/\u0000/g, '')).slice(0, max).join('');
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
 * The fetch ky calls: it sends `body` itself and cancels ky's copy of it at once. ky cancels its clone
 * of the request body when it is done, and a tee'd stream's cancel only settles once the other branch
 * is read or cancelled too, so a request refused before its body was read (fetch's "bad port" list,
 * for one) would otherwise leave ky pending for ever.
 */
function fetchSending(body: string, dispatcher: Dispatcher): typeof fetch {
  return async (input) => {
    const request = input as Request;
    // Not awaited: it settles once ky cancels the other branch too.
    void request.body?.cancel().catch(() => undefined);
    const init: RequestInit & { dispatcher: Dispatcher } = {
      method: request.method,
      headers: request.headers,
      body,
      redirect: request.redirect,
      signal: request.signal,
      dispatcher,
    };
    return fetch(request.url, init);
  };
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
    body,
    headers,
    timeout: DELIVERY_TIMEOUT_MS,
    retry: 0,
    redirect: 'manual',
    throwHttpErrors: false,
    fetch: fetchSending(body, dispatcher),
    signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
  };
  const response = await ky.post(url, options);
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    excerpt: await readExcerpt(response.body),
  };
}
