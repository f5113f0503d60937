// Sending one request (waiting out rate limits) and writing it down as a curl line anyone can re-run.

/** A request exactly as sent: the URL already carries the query string. */
export interface HttpRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** A request and the answer it got. */
export interface Exchange {
  request: HttpRequest;
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is empty or not JSON. */
  json: unknown;
}

/** How long a 429 may make the check wait in all before it gives up (the window is 60 s). */
const MAX_RATE_LIMIT_WAIT_MS = 5 * 60_000;

/**
 * Runs `attempt` again after Retry-After seconds while it is answered 429 (the deployment protecting
 * itself, not an answer to judge), up to MAX_RATE_LIMIT_WAIT_MS in all; returns the last answer.
 */
export async function waitingOutRateLimits(attempt: () => Promise<Exchange>): Promise<Exchange> {
  let waited = 0;
  for (;;) {
    const exchange = await attempt();
    if (exchange.status !== 429 || waited >= MAX_RATE_LIMIT_WAIT_MS) return exchange;
    const retryAfter = Number(exchange.headers.get('retry-after') ?? '1') || 1;
    const delay = Math.min(Math.max(retryAfter, 1), 61) * 1000;
    waited += delay;
    await new Promise((done) => setTimeout(done, delay));
  }
}

async function sendOnce(fetchFn: typeof fetch, request: HttpRequest): Promise<Exchange> {
  const response = await fetchFn(request.url, {
    method: request.method,
    headers: request.headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
    redirect: 'manual',
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { request, status: response.status, headers: response.headers, text, json };
}

/**
 * Sends the request, waiting out 429s (and never counting them as violations), unless
 * `waitOnRateLimit` is false (the 429 is then returned, for the rate-limit scenario to judge).
 */
export async function send(fetchFn: typeof fetch, request: HttpRequest, waitOnRateLimit = true): Promise<Exchange> {
  const once = () => sendOnce(fetchFn, request);
  return waitOnRateLimit ? waitingOutRateLimits(once) : once();
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * A shell command that repeats the request; each API key in `keys` (key → environment variable) is
 * shown as its variable, e.g. "$VOICE_CALL_API_KEY", never as itself.
 */
export function curlLine(request: HttpRequest, keys: Record<string, string>): string {
  const parts = ['curl', '-i', '-X', request.method, quote(request.url)];
  for (const [name, value] of Object.entries(request.headers)) {
    let header = quote(`${name}: ${value}`);
    for (const [key, variable] of Object.entries(keys)) header = header.replaceAll(key, `'"$${variable}"'`);
    parts.push('-H', header);
  }
  if (request.body !== undefined) parts.push('--data-raw', quote(request.body));
  return parts.join(' ');
}
