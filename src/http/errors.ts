// Every failure of a request as HTTP, in one place: each error code's status and the envelope body, the
// boundary that turns whatever a request throws into that envelope, and the invalid_request of a failed
// schema validation (with the field it names).
import type Koa from 'koa';
import type { Logger } from 'pino';
import type { ErrorObject } from 'ajv';
import type { components } from '../../generated/openapi.js';
import { DomainError, internalError, serviceUnavailable, type ErrorCode } from '../errors.js';
import { databaseFault } from '../database/faults.js';
import { messagesByField } from '../contract/validation-messages.js';
import type { Readiness } from '../health/readiness.js';
import { stateOf } from './request-state.js';

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

/**
 * Shows a failure as a page when the request's path has pages of its own; false when the request gets
 * the error envelope. Status and headers (Retry-After) are already set.
 */
export type FaultPage = (ctx: Koa.Context, status: number, error: DomainError) => boolean;

/**
 * Turns every failure into the error envelope (or `faultPage`'s page). Domain errors go out as they
 * are; a database that cannot be reached or could not answer in time becomes service_unavailable with
 * Retry-After (logged at debug: the access log has the 503; the readiness probe logs the outage and
 * refuses further requests until the database answers); anything else is logged with its stack and
 * answered with a bare internal_error. With `checkDeclared`, an error status the matched operation
 * does not declare in the spec becomes a loud contract violation.
 */
export function errorBoundary(
  logger: Logger,
  readiness: Readiness,
  checkDeclared: boolean,
  faultPage: FaultPage,
): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      let apiError: DomainError;
      if (caught instanceof DomainError) {
        apiError = caught;
      } else if (databaseFault(caught)) {
        logger.debug({ err: caught, requestId: stateOf(ctx).requestId }, 'database unavailable');
        if (databaseFault(caught) === 'unreachable') readiness.noteDatabaseFailure();
        apiError = serviceUnavailable();
      } else {
        logger.error({ err: caught, requestId: stateOf(ctx).requestId }, 'unhandled error');
        apiError = internalError();
      }
      const operation = stateOf(ctx).operation;
      if (checkDeclared && operation && !operation.responses?.[String(statusOf(apiError))]) {
        logger.error(
          { operationId: operation.operationId, status: statusOf(apiError), code: apiError.code },
          'contract violation: error status not declared for this operation',
        );
        apiError = new DomainError(
          'internal_error',
          `Contract violation: ${operation.operationId} does not declare status ${statusOf(apiError)} (${apiError.code}).`,
        );
      }
      ctx.status = statusOf(apiError);
      for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
      if (!faultPage(ctx, ctx.status, apiError)) ctx.body = envelopeOf(apiError);
    }
  };
}

/**
 * Builds the invalid_request error for a failed validation; `param` is the first failing field.
 * `validated` is the object the errors point into, from which refused values are quoted.
 */
export function validationError(
  errors: ErrorObject[],
  headerNames: ReadonlyMap<string, string>,
  validated: unknown,
): DomainError {
  const details = messagesByField(errors, { data: validated, headerNames });
  const [param, messages] = [...details][0] ?? ['body', ['is invalid']];
  return new DomainError('invalid_request', `${param}: ${messages[0]}`, {
    param,
    details: Object.fromEntries(details),
  });
}
