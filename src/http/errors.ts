// ApiError and the error envelope: every failure leaves the service as {error: {code, message, ...}}.
import type { components } from '../../generated/openapi.js';

export type ErrorCode = components['schemas']['ErrorCode'];
export type ErrorBody = components['schemas']['ErrorResponse'];

/** The HTTP status each error code is answered with (documented in the spec's introduction). */
export const STATUS_BY_CODE: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_conflict: 409,
  invalid_state: 409,
  too_many_requests: 429,
  internal_error: 500,
  upstream_error: 502,
};

export interface ApiErrorOptions {
  param?: string;
  details?: Record<string, string[]>;
  headers?: Record<string, string>;
}

/** A failure the client should see as-is: its code, message and param reach the response. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly details: Record<string, string[]> | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: ApiErrorOptions = {}) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.param = options.param;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return STATUS_BY_CODE[this.code];
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.param !== undefined) error.param = this.param;
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

/** An invalid_request error for one field, with the flat details map filled in. */
export function invalidField(param: string, message: string): ApiError {
  return new ApiError('invalid_request', `${param}: ${message}`, { param, details: { [param]: [message] } });
}

/** A not_found error naming the kind of resource and the parameter that referenced it. */
export function notFound(resource: string, param = 'id'): ApiError {
  return new ApiError('not_found', `No ${resource} with this id exists in your organisation.`, { param });
}

/** The generic answer for unexpected failures; the cause is logged, never sent. */
export function internalError(): ApiError {
  return new ApiError(
    'internal_error',
    'Something went wrong on our side. Quote the Request-Id header when contacting support.',
  );
}
