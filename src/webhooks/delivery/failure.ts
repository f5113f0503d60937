// Maps a failed request to the spec's failure kinds (WebhookFailureKind) and describes it for the log.
import type { components } from '../../../generated/openapi.js';

/** Why an attempt failed, as the spec names it. */
export type FailureKind = components['schemas']['WebhookFailureKind'];

/**
 * Node's code for a failed assertion. Thrown from inside the HTTP client it means the receiver's answer
 * was one the client cannot handle at all, such as a 101 Switching Protocols to a plain POST.
 */
const ASSERTION_CODE = 'ERR_ASSERTION';

/** What the log says instead of the client's own assertion text. */
const UNREADABLE_ANSWER =
  "the receiver's answer could not be read as an HTTP response to this request (an unrequested 1xx such as 101 Switching Protocols, or a malformed answer)";

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|HOSTNAME_MISMATCH|ERR_OSSL)/;

function codesOf(error: unknown): string[] {
  const codes: string[] = [];
  for (let current = error, depth = 0; current && depth < 6; depth += 1) {
    if (typeof current !== 'object') break;
    const { code, name, cause } = current as { code?: unknown; name?: unknown; cause?: unknown };
    if (typeof code === 'string') codes.push(code);
    if (typeof name === 'string') codes.push(name);
    current = cause;
  }
  return codes;
}

/** The failure kind for an error thrown while sending (never for an HTTP answer). Never throws. */
export function classifyError(error: unknown): FailureKind {
  const codes = codesOf(error);
  const has = (predicate: (code: string) => boolean) => codes.some(predicate);
  if (has((code) => code === 'ERR_WEBHOOK_GUARD')) return 'guard';
  if (
    has((code) =>
      [
        'TimeoutError',
        'UND_ERR_CONNECT_TIMEOUT',
        'UND_ERR_HEADERS_TIMEOUT',
        'UND_ERR_BODY_TIMEOUT',
        'ETIMEDOUT',
      ].includes(code),
    )
  ) {
    return 'timeout';
  }
  if (has((code) => TLS_CODE.test(code))) return 'tls';
  if (has((code) => code === 'ECONNREFUSED')) return 'connection_refused';
  if (has((code) => ['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED'].includes(code)))
    return 'connection_reset';
  if (has((code) => ['ENOTFOUND', 'EAI_AGAIN', 'EAI_NONAME', 'EAI_FAIL', 'EAI_NODATA'].includes(code))) return 'dns';
  return 'other';
}

/**
 * What the delivery log says of the usual certificate failures, in the receiver owner's terms (the
 * TLS library's own text can carry advice about this server's runtime, which its reader cannot act on).
 */
const TLS_PROBLEMS: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: "the receiver's certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "the receiver's certificate chain ends in a self-signed certificate that is not trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "the receiver's certificate is not signed by a trusted authority (is its intermediate certificate missing?)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    "the receiver's certificate is not signed by a trusted authority (is its intermediate certificate missing?)",
  UNABLE_TO_GET_ISSUER_CERT: "the issuer of the receiver's certificate is not known",
  CERT_HAS_EXPIRED: "the receiver's certificate has expired",
  CERT_NOT_YET_VALID: "the receiver's certificate is not valid yet",
  CERT_REVOKED: "the receiver's certificate was revoked",
  ERR_TLS_CERT_ALTNAME_INVALID: "the receiver's certificate does not name the endpoint's host",
};

/** A short human-readable description of a send error, for the delivery log. */
export function describeError(error: unknown): string {
  const codes = codesOf(error);
  if (codes.includes(ASSERTION_CODE)) return UNREADABLE_ANSWER;
  const tlsCode = codes.find((code) => TLS_CODE.test(code));
  if (tlsCode !== undefined) {
    return `TLS handshake failed: ${TLS_PROBLEMS[tlsCode] ?? 'the receiver and this service could not agree on a secure connection'} (${tlsCode})`;
  }
  const parts: string[] = [];
  for (let current = error, depth = 0; current instanceof Error && depth < 6; depth += 1) {
    if (!parts.includes(current.message)) parts.push(current.message);
    current = current.cause;
  }
  return parts.join(': ').slice(0, 500) || 'unknown error';
}
