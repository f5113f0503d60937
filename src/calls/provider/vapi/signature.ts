// Verifies a request Vapi signed with an HMAC credential (the vendor's HMACAuthenticationPlan with its
// defaults: SHA-256 over "{timestamp}.{body}", hex, in x-signature, the timestamp in x-timestamp).
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying the hex HMAC of the signed payload (the plan's default signatureHeader). */
export const SIGNATURE_HEADER = 'x-signature';
/** The header carrying the signing time (the plan's default timestampHeader). */
export const TIMESTAMP_HEADER = 'x-timestamp';
/** How far a signature's timestamp may be from our clock, either way, before it is refused as stale. */
const SIGNATURE_WINDOW_MS = 5 * 60 * 1000;

/** Why a signed request was refused, or null when it verified. */
export type SignatureRefusal = 'missing' | 'malformed' | 'stale' | 'mismatch';

/** The request parts a signature covers. */
export interface SignedRequest {
  /** The raw body bytes exactly as received. */
  body: Buffer;
  header(name: string): string | undefined;
}

/**
 * The timestamp header as epoch milliseconds. The vendor document does not fix the unit, so a value
 * below 10^12 is taken as seconds and anything larger as milliseconds.
 */
function timestampMs(value: string): number | null {
  if (!/^\d{1,16}$/.test(value)) return null;
  const number = Number(value);
  return number < 1e12 ? number * 1000 : number;
}

/** The hex HMAC-SHA256 Vapi sends for `body` signed at `timestamp` (exported for tests and tools). */
export function vapiSignature(secret: string, timestamp: string, body: Buffer): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
}

/** Checks a request's signature against `secret` at `now`; null when it verifies, else why not. */
export function verifyVapiSignature(request: SignedRequest, secret: string, now: Date): SignatureRefusal | null {
  const signature = request.header(SIGNATURE_HEADER);
  const timestamp = request.header(TIMESTAMP_HEADER);
  if (!signature || !timestamp) return 'missing';
  const at = timestampMs(timestamp);
  if (at === null || !/^[0-9a-f]{64}$/i.test(signature)) return 'malformed';
  if (Math.abs(now.getTime() - at) > SIGNATURE_WINDOW_MS) return 'stale';
  const expected = Buffer.from(vapiSignature(secret, timestamp, request.body), 'hex');
  return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? null : 'mismatch';
}
