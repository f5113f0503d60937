// Signing: x-svc-signature = t=<ms>,v1=<hex HMAC-SHA256 of "<t>.<body>"> with one v1 per live secret.
import { createHmac } from 'node:crypto';

/** The hex HMAC-SHA256 of `<timestampMs>.<body>` keyed with `secret`. */
function signPayload(secret: string, timestampMs: number, body: string): string {
  return createHmac('sha256', secret).update(`${timestampMs}.${body}`).digest('hex');
}

/** The x-svc-signature header value: the timestamp, then a v1 entry per secret (newest first). */
export function signatureHeader(secrets: readonly string[], timestampMs: number, body: string): string {
  return [`t=${timestampMs}`, ...secrets.map((secret) => `v1=${signPayload(secret, timestampMs, body)}`)].join(',');
}
