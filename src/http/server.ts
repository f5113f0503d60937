// The HTTP server around the Koa app: its read timeouts, the answers in the error envelope to requests
// Node cannot parse, and a shutdown that loses no request (drain, stop accepting, finish, then close).
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Readiness } from '../health/readiness.js';
import { DomainError } from '../errors.js';
import { envelopeOf, statusOf } from './errors.js';

/** A listening server. */
export interface HttpServer {
  port: number;
  /** Closes every connection at once and stops listening (tests). */
  close(): Promise<void>;
  /**
   * Stops taking traffic without resetting a connection: reports not ready, keeps serving for
   * `drainMs` (every answer closing its connection) so load balancers move away, stops accepting,
   * lets requests in flight finish for up to `timeoutMs`, then closes what is left.
   */
  shutdown(options: { drainMs: number; timeoutMs: number }): Promise<void>;
}

/** What a server may change beyond the configuration. */
export interface HttpServerOptions {
  /** The class of the server's answers, extending Node's (Node's `ServerResponse` server option). */
  ServerResponse?: typeof http.ServerResponse<http.IncomingMessage>;
}

/** Listens on the configured host and port with `listener` (the Koa app's callback); throws when the port cannot be had. */
export async function startHttpServer(
  listener: http.RequestListener,
  config: Pick<Config, 'host' | 'port' | 'headersTimeoutMs' | 'bodyTimeoutMs'>,
  readiness: Readiness,
  logger: Logger,
  options: HttpServerOptions = {},
): Promise<HttpServer> {
  // Read timeouts are enforced on this interval: keep it well under the shortest of them.
  const server = http.createServer(
    {
      connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs / 2),
      ...(options.ServerResponse ? { ServerResponse: options.ServerResponse } : {}),
    },
    listener,
  );
  answerClientErrors(server);
  // Idle keep-alive connections live longer than the usual load balancer's (60 s), so the balancer
  // closes them first and never sends a request on a connection being closed.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = config.headersTimeoutMs;
  // The whole request; the body has its own, shorter limit in the app (408 in the envelope).
  server.requestTimeout = config.headersTimeoutMs + config.bodyTimeoutMs + 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return {
    port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    shutdown: async ({ drainMs, timeoutMs }) => {
      readiness.startDraining();
      if (drainMs > 0) {
        logger.info({ drainMs }, 'draining: /readyz answers 503, connections close after their next answer');
        await new Promise((resolve) => setTimeout(resolve, drainMs));
      }
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([closed, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
      server.closeAllConnections();
    },
  };
}

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
