// Domain errors: failures a client should see, named by the spec's stable error codes. They carry no
// HTTP status; http/errors.ts maps them to statuses and the envelope in one place.
import type { components } from '../generated/openapi.js';

export type ErrorCode = components['schemas']['ErrorCode'];

export interface DomainErrorOptions {
  param?: string;
  details?: Record<string, string[]>;
  headers?: Record<string, string>;
}

/** A failure the client should see as-is: its code, message and param reach the response. */
export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly param: string | undefined;
  readonly details: Record<string, string[]> | undefined;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: DomainErrorOptions = {}) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.param = options.param;
    this.details = options.details;
    this.headers = options.headers ?? {};
  }
}

/** An invalid_request error for one field, with the flat details map filled in. */
export function invalidField(param: string, message: string): DomainError {
  return new DomainError('invalid_request', `${param}: ${message}`, { param, details: { [param]: [message] } });
}

/**
 * The invalid_request error for a value that failed validation, given each failing field's messages
 * (messagesByField): param is the first field and the message its first message, as request validation
 * words it.
 */
export function invalidFields(details: ReadonlyMap<string, string[]>): DomainError {
  const [param, messages] = [...details][0] ?? ['body', ['is invalid']];
  return new DomainError('invalid_request', `${param}: ${messages[0]}`, {
    param,
    details: Object.fromEntries(details),
  });
}

/** A not_found error naming the kind of resource and the parameter that referenced it. */
export function notFound(resource: string, param = 'id'): DomainError {
  return new DomainError('not_found', `No ${resource} with this id exists in your organisation.`, { param });
}

/** The generic answer for unexpected failures; the cause is logged, never sent. */
export function internalError(): DomainError {
  return new DomainError(
    'internal_error',
    'Something went wrong on our side. Quote the Request-Id header when contacting support.',
  );
}

/** How long a client is asked to wait after the database failed, in seconds. */
export const UNAVAILABLE_RETRY_AFTER_S = 2;

/** The answer for a database that cannot be reached or could not answer in time; the cause is logged. */
export function serviceUnavailable(message = 'The service is temporarily unavailable'): DomainError {
  return new DomainError('service_unavailable', `${message}; retry in ${UNAVAILABLE_RETRY_AFTER_S} seconds.`, {
    headers: { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) },
  });
}
