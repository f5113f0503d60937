// A small HTTP load balancer on 127.0.0.1 for restart tests: it checks each backend's /readyz, one
// check at a time per backend with CHECK_GAP_MS between them, and sends each request to the next
// backend in rotation, over keep-alive connections. Like a production balancer's health check, a
// backend joins the rotation on its first 200 and leaves it after UNHEALTHY_AFTER checks in a row
// without one, each given CHECK_TIMEOUT_MS: a backend that says it drains leaves within a few gaps,
// while one whose checks are slow on a starved machine stays until they fail for seconds (a backend's
// drain must outlast that, as behind a real balancer). It counts the requests it could not forward (a
// reset or refused backend connection), which it answers 502.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  url: string;
  /** Requests that failed between the balancer and a backend. */
  readonly forwardFailures: string[];
  /** Whether the backend at `port` is currently taking traffic. */
  healthy(port: number): boolean;
  close(): Promise<void>;
}

/** Failed checks in a row that take a backend out of the rotation. */
const UNHEALTHY_AFTER = 3;

/** How long a check may take before it counts as failed (Kubernetes' default readiness timeout). */
const CHECK_TIMEOUT_MS = 1_000;

/** The pause between the end of one check of a backend and the start of the next. */
const CHECK_GAP_MS = 100;

/** Starts a balancer in front of the backends on `ports` (127.0.0.1). */
export async function startBalancer(ports: number[]): Promise<Balancer> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const probeAgent = new http.Agent({ keepAlive: false });
  const healthy = new Map(ports.map((port) => [port, false]));
  const failedChecks = new Map(ports.map((port) => [port, 0]));
  const forwardFailures: string[] = [];
  let turn = 0;
  let closed = false;

  const check = (port: number) =>
    new Promise<boolean>((resolve) => {
      const request = http.get(
        { host: '127.0.0.1', port, path: '/readyz', agent: probeAgent, timeout: CHECK_TIMEOUT_MS },
        (response) => {
          response.resume();
          resolve(response.statusCode === 200);
        },
      );
      request.on('timeout', () => {
        resolve(false);
        request.destroy();
      });
      request.on('error', () => resolve(false));
    });
  const checking = ports.map(async (port) => {
    while (!closed) {
      const ok = await check(port);
      const failed = ok ? 0 : failedChecks.get(port)! + 1;
      failedChecks.set(port, failed);
      if (ok) healthy.set(port, true);
      else if (failed >= UNHEALTHY_AFTER) healthy.set(port, false);
      await new Promise((resolve) => setTimeout(resolve, CHECK_GAP_MS));
    }
  });

  const server = http.createServer((request, response) => {
    const ready = ports.filter((port) => healthy.get(port));
    if (ready.length === 0) {
      response.writeHead(503).end('no backend');
      return;
    }
    const port = ready[turn++ % ready.length]!;
    const upstream = http.request(
      { host: '127.0.0.1', port, method: request.method, path: request.url, headers: request.headers, agent },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', (error) => {
      forwardFailures.push(`${request.method} ${request.url} -> ${port}: ${error.message}`);
      if (!response.headersSent) response.writeHead(502).end('backend failed');
      else response.destroy();
    });
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    forwardFailures,
    healthy: (port) => healthy.get(port) === true,
    close: async () => {
      closed = true;
      await Promise.all(checking);
      agent.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
