// The operator's port (METRICS_PORT): Prometheus text at GET /metrics, and the same /healthz and
// /readyz as the API port, so a worker process, which has no API port, can be probed too. Nothing of
// the API is served here and nothing of this is served on the API port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readinessAnswer } from '../health/readiness.js';

/** What /readyz asks: why the process should not get traffic now, or null when it should. */
export interface ReadinessCheck {
  notReadyReason(): Promise<string | null>;
}

/** A listening metrics server. */
export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/** Where the metrics come from: this process's registry, or the cluster's aggregated view. */
export interface MetricsSource {
  contentType: string;
  metrics(): Promise<string>;
}

/** Starts the metrics server on `host`:`port`; throws when the port cannot be had. */
export async function startMetricsServer(
  source: MetricsSource,
  readiness: ReadinessCheck,
  options: { host: string; port: number },
): Promise<MetricsServer> {
  const server = http.createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const reply = (status: number, type: string, body: string) =>
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
    if (request.method !== 'GET' && request.method !== 'HEAD') return reply(405, 'text/plain', 'GET only\n');
    if (path === '/metrics') {
      source.metrics().then(
        (text) => reply(200, source.contentType, text),
        (error: unknown) => reply(500, 'text/plain', `metrics unavailable: ${String(error)}\n`),
      );
      return;
    }
    if (path === '/healthz') return reply(200, 'application/json', '{"status":"ok"}');
    if (path === '/readyz') {
      // notReadyReason never rejects (see Readiness), and the reply it leads to does not throw.
      void readiness.notReadyReason().then((reason) => {
        const { status, headers, body } = readinessAnswer(reason);
        response.setHeaders(new Map(Object.entries(headers)));
        reply(status, 'application/json', JSON.stringify(body));
      });
      return;
    }
    return reply(404, 'text/plain', 'not found: /metrics, /healthz, /readyz\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
