// Turns every failure below it into the error envelope (body-parser errors included), in one place.
import type Koa from 'koa';
import type { Logger } from 'pino';
import { DomainError, internalError } from '../errors.js';
import { envelopeOf, statusOf } from './error-envelope.js';
import { stateOf } from './request-state.js';

interface HttpError extends Error {
  status?: number;
  type?: string;
  expose?: boolean;
}

/** Maps errors thrown by the body parser to invalid_request; null for anything else. */
function bodyParserError(error: HttpError): DomainError | null {
  if (error.type === 'entity.too.large' || error.status === 413) {
    return new DomainError('invalid_request', 'body: the request body exceeds the 64 KiB limit', {
      param: 'body',
      details: { body: ['exceeds the 64 KiB limit'] },
    });
  }
  if (error.status === 400 || error.status === 415 || error.type === 'entity.parse.failed') {
    return new DomainError('invalid_request', 'body: the request body is not valid JSON', {
      param: 'body',
      details: { body: ['is not valid JSON'] },
    });
  }
  if (error.type === 'encoding.unsupported' || error.type === 'charset.unsupported') {
    return new DomainError('invalid_request', 'body: unsupported content encoding or charset', {
      param: 'body',
      details: { body: ['unsupported content encoding or charset'] },
    });
  }
  return null;
}

/**
 * Turns every failure into the error envelope. Domain errors go out as they are; anything else is
 * logged with its stack and answered with a bare internal_error. With `checkDeclared`, an error
 * status the matched operation does not declare in the spec becomes a loud contract violation.
 */
export function errorBoundary(logger: Logger, checkDeclared: boolean): Koa.Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (caught) {
      const error = caught as HttpError;
      let apiError = error instanceof DomainError ? error : bodyParserError(error);
      if (!apiError) {
        logger.error({ err: error, requestId: stateOf(ctx).requestId }, 'unhandled error');
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
      ctx.body = envelopeOf(apiError);
      for (const [name, value] of Object.entries(apiError.headers)) ctx.set(name, value);
    }
  };
}
