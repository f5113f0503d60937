// One HTTP POST of a delivery with ky over undici's fetch: 10-second timeout, no retries, redirects not
// followed, and at most the first 500 characters of the answer kept (the rest is cancelled, not buffered).
import ky, { type Options } from 'ky';
import { fetch as undiciFetch, type Dispatcher } from 'undici';
import { DELIVERY_TIMEOUT_MS, RESPONSE_EXCERPT_CHARS as EXCERPT_CHARS } from '../policy.js';
import { blockedPorts } from './blocked-ports.js';
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

/**
 * Reads an answer's body until twice the excerpt's length arrived, then cancels the rest (which closes
 * the connection rather than draining a large body). A body cut short (reset, deadline) keeps what
 * arrived. Never rejects.
 */
async function readExcerpt(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (body === null) return '';
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
    // Keep what arrived.
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return excerptOf(text);
}

/**
 * ky's `fetch` option: undici's own fetch on `dispatcher`. Node's global fetch is the undici Node
 * bundles (7 in Node 24), whose request handlers an undici 8 Agent rejects (UND_ERR_INVALID_ARG), so
 * fetch and dispatcher come from the same undici. ky hands over a Request of Node's global fetch, which undici's fetch does not take as
 * input: its URL, method, headers, body, redirect mode and signal are passed instead.
 */
function fetchThrough(dispatcher: Dispatcher): NonNullable<Options['fetch']> {
  return async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    const response = await undiciFetch(request.url, {
      method: request.method,
      headers: [...request.headers],
      body: request.body === null ? null : await request.arrayBuffer(),
      redirect: request.redirect,
      signal: request.signal,
      dispatcher,
    });
    // undici's Response implements the global Response interface; only the declared types differ.
    return response as unknown as Response;
  };
}

/**
 * Ports the Fetch standard blocks (25, 6000...) are refused without contacting the host: a sending
 * policy like the address guard, reported as one (failure kind `guard`).
 */
function refuseBlockedPort(url: string): void {
  const { port } = new URL(url);
  if (port && blockedPorts.has(port)) {
    throw new GuardError(`port ${port} is on fetch's list of blocked ports; the request was not sent`);
  }
}

/**
 * POSTs `body` to `url` through `dispatcher`. Resolves with the answer whatever its status (a 3xx is
 * returned, not followed); rejects with the transport error (timeout, refused, TLS, guard...) and for an
 * answer HTTP cannot carry (a status above 599, an unrequested 101).
 * `signal` aborts the attempt; the whole attempt, body excerpt included, ends within the timeout.
 */
export async function postDelivery(
  dispatcher: Dispatcher,
  url: string,
  headers: Record<string, string>,
  body: string,
  signal?: AbortSignal,
): Promise<HttpAnswer> {
  refuseBlockedPort(url);
  const deadline = AbortSignal.timeout(DELIVERY_TIMEOUT_MS);
  const response = await ky.post(url, {
    body,
    headers,
    timeout: DELIVERY_TIMEOUT_MS,
    retry: 0,
    // undici's fetch, unlike a browser's, answers a 3xx in manual mode as it came: status, headers, body.
    redirect: 'manual',
    throwHttpErrors: false,
    fetch: fetchThrough(dispatcher),
    signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
  });
  const excerpt = await readExcerpt(response.body);
  if (response.status > 599) {
    throw new Error(`the receiver answered with status ${response.status}, outside HTTP's 100-599`);
  }
  return { status: response.status, retryAfter: response.headers.get('retry-after'), excerpt };
}
