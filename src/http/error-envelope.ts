// The one place where domain errors become HTTP: each error code's status, and the envelope body.
import type { components } from '../../generated/openapi.js';
import type { DomainError, ErrorCode } from '../errors.js';

type ErrorBody = components['schemas']['ErrorResponse'];

/** The HTTP status each error code is answered with (documented in the spec's introduction). */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  idempotency_conflict: 409,
  invalid_state: 409,
  unsupported_media_type: 415,
  too_many_requests: 429,
  internal_error: 500,
  upstream_error: 502,
  service_unavailable: 503,
};

/** The HTTP status a domain error is answered with. */
export function statusOf(error: DomainError): number {
  return STATUS_BY_CODE[error.code];
}

/** The error envelope for a domain error: code and message, and param and details when set. */
export function envelopeOf(error: DomainError): ErrorBody {
  const body: ErrorBody['error'] = { code: error.code, message: error.message };
  if (error.param !== undefined) body.param = error.param;
  if (error.details !== undefined) body.details = error.details;
  return { error: body };
}
