// Reads a request's JSON body with @koa/bodyparser: Content-Type and charset checked
// first, Content-Encoding decoded, size bounded, and time bounded here; then the bytes are decoded as
// strict UTF-8 and parsed.
import type Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import { inexactNumber, parseExactJson } from '../contract/exact-json.js';
import { DomainError, invalidField } from '../errors.js';
import { stateOf } from './request-state.js';

/** The largest body accepted, in bytes (after decoding any Content-Encoding). */
export const BODY_LIMIT_BYTES = 64 * 1024;

/** Whether a request declares a body (a non-zero Content-Length, or chunked transfer). */
export function declaresBody(ctx: Koa.Context): boolean {
  const length = ctx.get('content-length');
  return (length !== '' && length !== '0') || ctx.get('transfer-encoding') !== '';
}

function bodyError(message: string): DomainError {
  return new DomainError('invalid_request', `body: ${message}`, { param: 'body', details: { body: [message] } });
}

function checkContentType(ctx: Koa.Context): void {
  if (!ctx.is('application/json')) {
    throw new DomainError('invalid_request', 'Content-Type: request bodies must be sent as application/json', {
      param: 'Content-Type',
      details: { 'Content-Type': ['must be application/json'] },
    });
  }
  const charset = ctx.request.charset.toLowerCase();
  if (charset && charset !== 'utf-8' && charset !== 'utf8') {
    throw new DomainError('invalid_request', 'Content-Type: the charset must be utf-8', {
      param: 'Content-Type',
      details: { 'Content-Type': ['the charset must be utf-8'] },
    });
  }
}

/**
 * The body reader. It takes application/json as text (its JSON parser refuses `__proto__` keys with a
 * bare syntax error, where the API names the field) and as latin1, which hands over each byte as one
 * character: its UTF-8 decoding would replace bytes that are not UTF-8 instead of refusing them.
 */
function textReader(): Koa.Middleware {
  return bodyParser({
    enableTypes: ['text'],
    extendTypes: { text: ['application/json'] },
    textLimit: BODY_LIMIT_BYTES,
    encoding: 'latin1',
    // The operation decides whether a body is read, whatever its method.
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'],
  }) as Koa.Middleware;
}

/** The envelope error for a failure of the body reader, by its HTTP status and raw-body's error type. */
function readError(ctx: Koa.Context, error: unknown): DomainError {
  const { status, type } = error as { status?: unknown; type?: unknown };
  if (status === 415) {
    const encoding = ctx.get('content-encoding');
    return new DomainError(
      'unsupported_media_type',
      `Content-Encoding: ${encoding} is not supported; send the body uncompressed, or as gzip, deflate or br.`,
      { param: 'Content-Encoding' },
    );
  }
  if (status === 413) {
    // The rest of the body is not read: the connection goes once the answer is sent.
    ctx.set('Connection', 'close');
    return bodyError(`exceeds the ${BODY_LIMIT_BYTES / 1024} KiB limit`);
  }
  if (type === 'request.aborted') return bodyError('the client stopped sending it');
  // A corrupt compressed stream, or a Content-Length the body does not match.
  return bodyError('could not be read as sent (check its Content-Encoding and Content-Length)');
}

/** The request_timeout of a body that did not arrive; the rest of it will never be read, so the connection goes once the answer is sent. */
function bodyTimedOut(ctx: Koa.Context, timeoutMs: number): DomainError {
  ctx.set('Connection', 'close');
  return new DomainError(
    'request_timeout',
    `The request body did not arrive within ${Math.round(timeoutMs / 1000)} seconds.`,
    { param: 'body' },
  );
}

/**
 * Whether a body the request declared (chunked, say) ends without a single byte, as some clients send
 * on a POST that carries nothing: resolves false at the first byte (the rest is left unread), and
 * throws request_timeout when the body neither ends nor starts within `timeoutMs`.
 */
export function bodyArrivesEmpty(ctx: Koa.Context, timeoutMs: number): Promise<boolean> {
  const request = ctx.req;
  return new Promise((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      request.off('data', onData).off('end', onEnd).off('error', onEnd);
      request.pause();
      outcome();
    };
    const onData = (chunk: Buffer) => {
      if (chunk.length > 0) settle(() => resolve(false));
    };
    const onEnd = () => settle(() => resolve(request.complete));
    const timer = setTimeout(() => settle(() => reject(bodyTimedOut(ctx, timeoutMs))), timeoutMs);
    request.on('data', onData).on('end', onEnd).on('error', onEnd);
  });
}

/** Runs `read` on the request within `timeoutMs`; returns the body as latin1 text, or throws the envelope error. */
async function readText(ctx: Koa.Context, read: Koa.Middleware, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(bodyTimedOut(ctx, timeoutMs)), timeoutMs);
  });
  const bodyRead: { startedAt: number; tookMs?: number } = { startedAt: performance.now() };
  stateOf(ctx).bodyRead = bodyRead;
  try {
    await Promise.race([read(ctx, () => Promise.resolve()), timedOut]);
  } catch (error) {
    throw error instanceof DomainError ? error : readError(ctx, error);
  } finally {
    clearTimeout(timer);
    bodyRead.tookMs = performance.now() - bodyRead.startedAt;
  }
  const text = ctx.request.body;
  // The reader leaves no text when the client had gone before it started.
  if (typeof text !== 'string') throw bodyError('the client stopped sending it');
  return text;
}

/**
 * Parses the body's bytes (one latin1 character each) as strict UTF-8 JSON; throws invalid_request
 * naming body, or naming the field of a number that would not come back as sent.
 */
function parseJson(bytes: string): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(bytes, 'latin1'));
  } catch {
    throw bodyError('is not valid UTF-8');
  }
  let parsed: ReturnType<typeof parseExactJson>;
  try {
    parsed = parseExactJson(text);
  } catch {
    throw bodyError('is not valid JSON');
  }
  if (parsed.inexact) {
    const field = parsed.inexact.path || 'body';
    throw invalidField(field, inexactNumber(parsed.inexact.source));
  }
  return parsed.value;
}

/**
 * Lower-cases the request's Content-Encoding before the reader sees it: content-codings are
 * case-insensitive (RFC 9110 §8.4.1), and the reader only knows their lower-case names.
 */
function normaliseContentEncoding(ctx: Koa.Context): void {
  const coding = ctx.req.headers['content-encoding'];
  if (coding) ctx.req.headers['content-encoding'] = coding.toLowerCase();
}

/**
 * The reader of an authenticated request's body, for an operation that takes one: returns the parsed
 * JSON, for openapi-backend to validate. Throws invalid_request for a wrong Content-Type or charset, a
 * body over 64 KiB, bytes that are not UTF-8, or text that is not JSON; unsupported_media_type for an
 * unknown Content-Encoding; request_timeout when the body does not arrive within `timeoutMs`.
 */
export function jsonBodyReader(timeoutMs: number): (ctx: Koa.Context) => Promise<unknown> {
  const read = textReader();
  return async (ctx) => {
    checkContentType(ctx);
    normaliseContentEncoding(ctx);
    return parseJson(await readText(ctx, read, timeoutMs));
  };
}
