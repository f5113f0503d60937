// One HTTP POST of a delivery through undici's request API on the delivery dispatcher: 10-second
// deadline, no retries, redirects not followed, and at most the first 500 characters of the answer kept
// (the rest is dropped, not buffered). undici's request API rather than ky over fetch: it costs far less
// CPU per attempt (docs/benchmarks.md), and the sender uses none of what they add (it owns its retry
// schedule and never follows redirects).
import type { Dispatcher } from 'undici';
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
 * Ports the Fetch standard blocks (25, 6000...) are refused without contacting the host: a sending
 * policy like the address guard, reported as one (failure kind `guard`).
 */
function refuseBlockedPort(url: URL): void {
  if (url.port && blockedPorts.has(url.port)) {
    throw new GuardError(`port ${url.port} is on fetch's list of blocked ports; the request was not sent`);
  }
}

/**
 * POSTs `body` to `url` through `dispatcher`. Resolves with the answer whatever its status (a 3xx is
 * returned, not followed); rejects with the transport error (timeout, refused, TLS, guard...) and for an
 * answer HTTP cannot carry (a status above 599, an unrequested 101).
 * `signal` aborts the attempt and must carry its deadline (at most the delivery timeout); without one,
 * the attempt gets the delivery timeout. The whole attempt, body excerpt included, ends by then.
 */
export async function postDelivery(
  dispatcher: Dispatcher,
  url: string,
  headers: Record<string, string>,
  body: string,
  signal?: AbortSignal,
): Promise<HttpAnswer> {
  const target = new URL(url);
  refuseBlockedPort(target);
  const answer = await dispatcher.request({
    origin: target.origin,
    path: `${target.pathname}${target.search}`,
    method: 'POST',
    headers,
    body,
    signal: signal ?? AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
  });
  const excerpt = await readExcerpt(answer.body);
  if (answer.statusCode > 599) {
    throw new Error(`the receiver answered with status ${answer.statusCode}, outside HTTP's 100-599`);
  }
  const retryAfter = answer.headers['retry-after'];
  return {
    status: answer.statusCode,
    retryAfter: retryAfter === undefined ? null : String(retryAfter),
    excerpt,
  };
}
