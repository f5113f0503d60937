// The first middlewares of the chain: request id, error boundary, access log, body guard.
import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import type { Logger } from 'pino';
import { DomainError, internalError } from '../errors.js';
import { envelopeOf, statusOf } from './error-envelope.js';
import type { RequestState } from './backend.js';

/** Gives every request an id, echoed in the Request-Id response header. */
export function requestId(): Koa.Middleware {
  // Ids are cut from a pool of CSPRNG bytes: a randomBytes call per request (a synchronous
  // getrandom) cost about 2% of a cheap request's CPU.
  const idBytes = 8;
  let pool = Buffer.alloc(0);
  let offset = 0;
  return async (ctx, next) => {
    if (offset + idBytes > pool.length) {
      pool = randomBytes(idBytes * 512);
      offset = 0;
    }
    const id = `req_${pool.toString('hex', offset, offset + idBytes)}`;
    offset += idBytes;
    (ctx.state as RequestState).requestId = id;
    ctx.set('Request-Id', id);
    await next();
  };
}

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
 * Turns every failure into the error envelope. ApiErrors go out as they are; anything else is
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
        logger.error({ err: error, requestId: (ctx.state as RequestState).requestId }, 'unhandled error');
        apiError = internalError();
      }
      const operation = (ctx.state as RequestState).operation;
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

/**
 * The path as logged: runs of 32 or more letters and digits (an API key's secret part, a webhook
 * secret, any other token a client pasted into a URL) are replaced. No id of the API is that long.
 */
export function loggablePath(path: string): string {
  return path.replace(/[A-Za-z0-9]{32,}/g, '[redacted]');
}

/**
 * One JSON log line per request: method, path (see loggablePath), status, duration, request id, org.
 * Runs outside the error boundary, so it logs the status actually sent.
 */
export function accessLog(logger: Logger): Koa.Middleware {
  return async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // The line is built only when it will be written (LOG_LEVEL may be above info).
      if (logger.isLevelEnabled('info')) logLine(ctx, started);
    }
  };

  function logLine(ctx: Koa.Context, started: number): void {
    const state = ctx.state as RequestState;
    logger.info(
      {
        requestId: state.requestId,
        method: ctx.method,
        path: loggablePath(ctx.path),
        status: ctx.status,
        durationMs: Math.round((performance.now() - started) * 10) / 10,
        orgId: state.auth?.orgId,
        operationId: state.operation?.operationId,
      },
      'request',
    );
  }
}

/**
 * Records whether a request carries a body and refuses bodies that are not JSON, before the body
 * parser (which would silently ignore them) runs.
 */
export function bodyGuard(): Koa.Middleware {
  return async (ctx, next) => {
    const length = ctx.get('content-length');
    const hasBody = (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== '';
    (ctx.state as RequestState).hasBody = hasBody;
    if (hasBody && !ctx.is('application/json')) {
      throw new DomainError('invalid_request', 'Content-Type: request bodies must be sent as application/json', {
        param: 'Content-Type',
        details: { 'Content-Type': ['must be application/json'] },
      });
    }
    await next();
  };
}
