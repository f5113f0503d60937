// One HTTP POST of a delivery with ky over undici's request API: 10-second timeout, no retries, redirects
// not followed, and at most the first 500 characters of the answer kept (the rest is dropped, not buffered).
import ky, { type Options } from 'ky';
import type { Dispatcher } from 'undici';
import { DELIVERY_TIMEOUT_MS, RESPONSE_EXCERPT_CHARS as EXCERPT_CHARS } from '../policy.js';
import { blockedPorts } from './blocked-ports.js';
import { GuardError } from './guarded-agent.js';

/** Statuses whose answers have no body (a Response for them may not be given one). */
const BODYLESS_STATUSES = new Set([204, 205, 304]);

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

/** Reads at most twice the excerpt's length of an answer's body, then drops the rest. Never rejects. */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string> {
  let text = '';
  try {
    body.setEncoding('utf8');
    for await (const chunk of body) {
      text += chunk as string;
      if (text.length >= EXCERPT_CHARS * 2) break;
    }
  } catch {
    // A body cut short (reset, deadline) keeps what arrived.
  } finally {
    body.destroy();
  }
  return excerptOf(text);
}

/**
 * The fetch ky calls: it sends ky's request with `body` through undici's request API on the delivery
 * dispatcher, not through fetch, whose web streams, Request copies and signal plumbing cost more than
 * the rest of an attempt. It answers a Response that carries the status, the Retry-After header and
 * the body's excerpt. ky is given no body on purpose: it would wrap it in a stream and tee it to keep
 * a copy for retries. Throws GuardError for a port fetch would block, and what the dispatcher throws.
 */
function sendThrough(dispatcher: Dispatcher, body: string): typeof fetch {
  return async (input) => {
    const request = input as Request;
    const url = new URL(request.url);
    refuseBlockedPort(url);
    const answer = await dispatcher.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: request.method as Dispatcher.HttpMethod,
      headers: Object.fromEntries(request.headers),
      body,
      signal: request.signal,
    });
    const excerpt = await readExcerpt(answer.body);
    if (answer.statusCode < 200 || answer.statusCode > 599) {
      throw new Error(`the receiver answered with status ${answer.statusCode}, outside 200-599`);
    }
    const retryAfter = answer.headers['retry-after'];
    const bodyless = excerpt === '' || BODYLESS_STATUSES.has(answer.statusCode);
    return new Response(bodyless ? null : excerpt, {
      status: answer.statusCode,
      headers: retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) },
    });
  };
}

/**
 * Ports the Fetch standard blocks (25, 6000...) are refused without contacting the host, as fetch
 * would: a sending policy like the address guard, reported as one (failure kind `guard`).
 */
function refuseBlockedPort(url: URL): void {
  if (url.port && blockedPorts.has(url.port)) {
    throw new GuardError(`port ${url.port} is on fetch's list of blocked ports; the request was not sent`);
  }
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
    fetch: sendThrough(dispatcher, body),
    signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
  };
  const response = await ky.post(url, options);
  return { status: response.status, retryAfter: response.headers.get('retry-after'), excerpt: await response.text() };
}
