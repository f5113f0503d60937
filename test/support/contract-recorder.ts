// Records the (operationId, status, error code) of every answer a test app sends, one JSONL file per
// test process, so a check after the suite can tell which declared statuses and codes tests produce;
// and fails the run loudly when an answer lacks a header the spec declares required for its status.
import { appendFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { inject } from 'vitest';
import type { ContractRecord } from '../../scripts/contract-coverage/contract.js';
import { matchOperation } from '../../src/conformance/spec/paths.js';
import type { ErrorResponse } from './json.js';
import { publishedOperations, publishedSpec } from './spec/published.js';
import { requiredResponseHeaders } from './spec/response-headers.js';

const API_ROOT = '/api/v1';

/**
 * An answer that keeps the body of an error handed to `end` (Koa sends a JSON body in one call, with
 * its status already set), so the recorder can read its code; the server uses it through Node's
 * `ServerResponse` option.
 */
export class RecordedResponse extends http.ServerResponse {
  /** What an error answer handed to `end`, as bytes. */
  readonly errorBodies: Buffer[] = [];

  override end(...args: unknown[]): this {
    const [chunk] = args;
    if (this.statusCode >= 400 && (typeof chunk === 'string' || Buffer.isBuffer(chunk))) {
      this.errorBodies.push(Buffer.from(chunk));
    }
    return super.end(...(args as Parameters<http.ServerResponse['end']>));
  }
}

/** The error code in an error answer's envelope, if it has one. */
function errorCodeOf(response: http.ServerResponse): string | undefined {
  if (response.statusCode < 400 || !(response instanceof RecordedResponse)) return undefined;
  try {
    const body = JSON.parse(Buffer.concat(response.errorBodies).toString('utf8')) as Partial<ErrorResponse>;
    return body.error?.code;
  } catch {
    return undefined;
  }
}

/**
 * Wraps a request listener so every answer to an API operation is appended to this process's record
 * file (its error code read when the server answers with RecordedResponse).
 */
export function recordResponses(listener: http.RequestListener): http.RequestListener {
  const file = path.join(inject('contractRecordDir'), `${process.pid}.jsonl`);
  return (request, response) => {
    const pathname = new URL(request.url ?? '/', 'http://localhost').pathname;
    // HEAD is answered like GET, headers included.
    const method = request.method === 'HEAD' ? 'GET' : (request.method ?? 'GET');
    const operation = pathname.startsWith(`${API_ROOT}/`)
      ? matchOperation(publishedOperations, method, pathname.slice(API_ROOT.length))
      : undefined;
    if (operation) {
      response.once('finish', () => {
        const required = requiredResponseHeaders(publishedSpec, operation.path, method, response.statusCode);
        const missing = required.filter((name) => !response.hasHeader(name));
        if (missing.length > 0) {
          // An uncaught error: vitest reports it and fails the run.
          throw new Error(
            `Contract violation: ${request.method} ${pathname} answered ${response.statusCode} without required header(s) ${missing.join(', ')}`,
          );
        }
      });
    }
    if (operation && request.method !== 'HEAD') {
      response.once('finish', () => {
        const code = errorCodeOf(response);
        const record: ContractRecord = {
          operationId: operation.id,
          status: response.statusCode,
          ...(code ? { code } : {}),
        };
        appendFileSync(file, `${JSON.stringify(record)}\n`);
      });
    }
    listener(request, response);
  };
}
