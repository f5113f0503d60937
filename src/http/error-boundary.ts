// Turns every failure below it into the error envelope, in one place: domain errors as they are, a
// database that cannot answer as 503 service_unavailable, anything else as a bare internal_error.
// Paths that answer with pages (the dashboard) may show the same failure as a page instead.
import type Koa from 'koa';
import type { Logger } from 'pino';
import { DomainError, internalError, serviceUnavailable } from '../errors.js';
import { databaseFault } from '../database/faults.js';
import { envelopeOf, statusOf } from './error-envelope.js';
import { stateOf } from './request-state.js';
import type { Readiness } from '../health/readiness.js';

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
