// Requests Node's HTTP parser refuses (bytes not allowed in a header, request smuggling attempts,
// oversized headers, a malformed request line) never reach the Koa chain; this answers them in the
// error envelope too, instead of Node's bare status line.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import { DomainError } from '../errors.js';
import { envelopeOf, statusOf } from './error-envelope.js';

function errorFor(code: string | undefined): DomainError {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return new DomainError('invalid_request', 'The request headers are larger than the server accepts (16 KiB).');
  }
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return new DomainError('request_timeout', 'The request did not arrive in time.');
  return new DomainError('invalid_request', 'The request is not valid HTTP/1.1.');
}

/**
 * Makes `server` answer requests it cannot take in the error envelope, then close the connection:
 * 408 request_timeout for headers that did not arrive in time, 400 invalid_request for the rest.
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
    // Like Node's own handler: answer only on a connection that has not sent anything yet.
    if (error.code === 'ECONNRESET' || !socket.writable || socket.bytesWritten > 0) {
      socket.destroy();
      return;
    }
    const refusal = errorFor(error.code);
    const status = statusOf(refusal);
    const body = JSON.stringify(envelopeOf(refusal));
    const head = [
      `HTTP/1.1 ${status} ${http.STATUS_CODES[status]}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      `Request-Id: req_${randomBytes(8).toString('hex')}`,
      'X-Content-Type-Options: nosniff',
      'Cache-Control: no-store',
      'Connection: close',
    ];
    socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  });
}
