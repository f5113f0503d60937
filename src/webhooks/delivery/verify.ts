// Receiver-side verification of a delivery, written from the published rules alone (it shares no code
// with the signer): raw body, 5-minute tolerance on t, constant-time comparison, any matching v1.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The replay window the spec gives receivers. */
const SIGNATURE_TOLERANCE_MS = 5 * 60 * 1000;

/** The verdict on one delivery: its timestamp when genuine, the reason otherwise. */
export type Verification = { ok: true; timestampMs: number } | { ok: false; reason: string };

/**
 * Checks an x-svc-signature header against the raw request body and the endpoint's secret(s).
 * `nowMs` defaults to the wall clock. Never throws; says why a delivery is rejected.
 */
export function verifySignature(
  rawBody: string | Buffer,
  header: string | undefined,
  secrets: readonly string[],
  nowMs: number = Date.now(),
): Verification {
  if (!header) return { ok: false, reason: 'missing x-svc-signature header' };
  let timestamp: string | undefined;
  const signatures: Buffer[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.split('=', 2) as [string, string | undefined];
    if (key === 't' && value !== undefined) timestamp = value;
    if (key === 'v1' && value !== undefined && /^[0-9a-f]{64}$/.test(value)) signatures.push(Buffer.from(value, 'hex'));
  }
  if (!timestamp || !/^\d{13}$/.test(timestamp)) return { ok: false, reason: 'no valid t= timestamp' };
  if (signatures.length === 0) return { ok: false, reason: 'no v1= signature' };
  const timestampMs = Number(timestamp);
  if (Math.abs(nowMs - timestampMs) > SIGNATURE_TOLERANCE_MS) {
    return { ok: false, reason: 'timestamp outside the 5-minute tolerance' };
  }
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : rawBody;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest();
    if (signatures.some((candidate) => timingSafeEqual(candidate, expected))) return { ok: true, timestampMs };
  }
  return { ok: false, reason: 'no v1 signature matches' };
}
