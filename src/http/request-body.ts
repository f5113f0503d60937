// Reads a request's JSON body, only once the caller is authenticated and within its rate limit:
// Content-Type and charset checked, Content-Encoding decoded (inflation), size and time bounded
// (raw-body and a timer), bytes decoded as strict UTF-8, then parsed.
import type { IncomingMessage } from 'node:http';
import type Koa from 'koa';
import inflate from 'inflation';
import getRawBody from 'raw-body';
import { DomainError } from '../errors.js';

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
  const charset = ctx.request.charset;
  if (charset && charset.toLowerCase() !== 'utf-8' && charset.toLowerCase() !== 'utf8') {
    throw new DomainError('invalid_request', 'Content-Type: the charset must be utf-8', {
      param: 'Content-Type',
      details: { 'Content-Type': ['the charset must be utf-8'] },
    });
  }
}

function decodedStream(req: IncomingMessage): NodeJS.ReadableStream {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  try {
    // inflation reads the header itself, case-sensitively: hand it the normalised value.
    return inflate(req, { encoding } as never);
  } catch {
    throw new DomainError(
      'unsupported_media_type',
      `Content-Encoding: ${encoding} is not supported; send the body uncompressed, or as gzip, deflate or br.`,
      { param: 'Content-Encoding' },
    );
  }
}

/** Reads the raw bytes within the size limit and `timeoutMs`; the reasons it fails become envelope errors. */
async function readBytes(ctx: Koa.Context, timeoutMs: number): Promise<Buffer> {
  const stream = decodedStream(ctx.req);
  const identity = (ctx.get('content-encoding') || 'identity').trim().toLowerCase() === 'identity';
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // The rest of the body will never be read: the connection goes once the answer is sent.
      ctx.set('Connection', 'close');
      reject(
        new DomainError(
          'request_timeout',
          `The request body did not arrive within ${Math.round(timeoutMs / 1000)} seconds.`,
          {
            param: 'body',
          },
        ),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([
      getRawBody(stream as never, {
        limit: BODY_LIMIT_BYTES,
        ...(identity && ctx.get('content-length') ? { length: ctx.get('content-length') } : {}),
      }),
      timedOut,
    ]);
  } catch (error) {
    if (error instanceof DomainError) throw error;
    const { type } = error as { type?: string };
    if (type === 'entity.too.large') {
      ctx.set('Connection', 'close');
      throw bodyError(`exceeds the ${BODY_LIMIT_BYTES / 1024} KiB limit`);
    }
    if (type === 'request.aborted') throw bodyError('the client stopped sending it');
    // A corrupt compressed stream, or a Content-Length the body does not match.
    throw bodyError('could not be read as sent (check its Content-Encoding and Content-Length)');
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Reads and parses the request's JSON body. Throws invalid_request for a wrong Content-Type or
 * charset, a body over 64 KiB, bytes that are not UTF-8, or text that is not JSON;
 * unsupported_media_type for an unknown Content-Encoding; request_timeout when the body does not
 * arrive within `timeoutMs`.
 */
export async function readJsonBody(ctx: Koa.Context, timeoutMs: number): Promise<unknown> {
  checkContentType(ctx);
  const bytes = await readBytes(ctx, timeoutMs);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw bodyError('is not valid UTF-8');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw bodyError('is not valid JSON');
  }
}
