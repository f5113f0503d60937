// The HTTP server around the Koa app: its read timeouts, the answers to requests Node cannot parse,
// and a shutdown that loses no request (drain, stop accepting, finish, then close).
import http from 'node:http';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Readiness } from '../health/readiness.js';
import { answerClientErrors } from './client-errors.js';

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

/** Listens on the configured host and port with `listener` (the Koa app's callback); throws when the port cannot be had. */
export async function startHttpServer(
  listener: http.RequestListener,
  config: Pick<Config, 'host' | 'port' | 'headersTimeoutMs' | 'bodyTimeoutMs'>,
  readiness: Readiness,
  logger: Logger,
): Promise<HttpServer> {
  // Read timeouts are enforced on this interval: keep it well under the shortest of them.
  const server = http.createServer(
    { connectionsCheckingInterval: Math.min(1_000, config.headersTimeoutMs / 2) },
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
