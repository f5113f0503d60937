// Hands a verified delivery on to a local HTTP(S) URL, as the service sent it: the same body bytes,
// content-type and x-svc-* headers (so the local app can verify the signature itself).
import type { IncomingHttpHeaders } from 'node:http';

/** What the local URL answered, or why it could not be reached. */
export type ForwardResult = { ok: true; status: number; body: string } | { ok: false; error: string };

/** Longer than this and the service, which waits 10 s for the listener, would count the delivery as failed. */
const FORWARD_TIMEOUT_MS = 9_000;

/** The forward target as a URL; throws an Error when `raw` is not an http:// or https:// URL. */
export function forwardTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`--forward-to must be a URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`--forward-to must be an http:// or https:// URL, got "${raw}"`);
  }
  return url;
}

/** POSTs `bytes` with the delivery's headers to `target`; never throws (a failure is a result). */
export async function forwardDelivery(
  target: URL,
  bytes: Buffer,
  headers: IncomingHttpHeaders,
): Promise<ForwardResult> {
  const forwarded: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if ((name === 'content-type' || name.startsWith('x-svc-')) && typeof value === 'string') forwarded[name] = value;
  }
  try {
    const response = await fetch(target, {
      method: 'POST',
      headers: forwarded,
      body: new Uint8Array(bytes),
      redirect: 'manual',
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    });
    return { ok: true, status: response.status, body: (await response.text()).slice(0, 500) };
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const name = (error as Error).name;
    return {
      ok: false,
      error:
        name === 'TimeoutError'
          ? `no answer within ${FORWARD_TIMEOUT_MS / 1000} s`
          : (cause ?? (error as Error).message),
    };
  }
}
