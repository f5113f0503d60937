// An HTTP proxy in front of a test server that can change requests on their way in and answers on
// their way out, one deliberate contract break at a time (for testing a conformance check).
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request's head as the proxy forwards it; `path` includes the query string. */
export interface ProxiedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
}

/** An answer as the proxy returns it. */
export interface ProxiedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** The changes a proxy makes; each returns what to forward (the argument, changed or not). */
export interface Mutation {
  request?(request: ProxiedRequest): ProxiedRequest;
  /**
   * For requests whose body is to change: the change. Those bodies are read in full first; every
   * other body streams through as it arrives (so a stalled one stalls at the server too).
   */
  requestBody?(request: ProxiedRequest): ((body: string) => string) | undefined;
  response?(request: ProxiedRequest, response: ProxiedResponse): ProxiedResponse;
}

/** A listening proxy: its origin and how to stop it. */
export interface MutatingProxy {
  origin: string;
  close(): Promise<void>;
}

const read = async (stream: AsyncIterable<Buffer>) => {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
};

/** Starts a proxy on 127.0.0.1 that forwards to `target` (an http origin) through `mutation`. */
export async function startMutatingProxy(target: string, mutation: Mutation): Promise<MutatingProxy> {
  const upstream = new URL(target);
  const server = http.createServer((incoming, outgoing) => void forward(incoming, outgoing));
  async function forward(incoming: http.IncomingMessage, outgoing: http.ServerResponse): Promise<void> {
    try {
      const original: ProxiedRequest = {
        method: incoming.method ?? 'GET',
        path: incoming.url ?? '/',
        headers: { ...incoming.headers },
      };
      const request = mutation.request?.(original) ?? original;
      const headers = { ...request.headers, host: upstream.host };
      // Bodies are changed as text, so the server is asked for them uncompressed.
      delete headers['accept-encoding'];
      const change = mutation.requestBody?.(request);
      const body = change ? change(await read(incoming)) : undefined;
      if (body !== undefined) {
        delete headers['transfer-encoding'];
        headers['content-length'] = String(Buffer.byteLength(body));
      }
      const answer = await new Promise<http.IncomingMessage>((resolve, reject) => {
        const sent = http.request(
          { host: upstream.hostname, port: upstream.port, method: request.method, path: request.path, headers },
          resolve,
        );
        sent.on('error', reject);
        if (body !== undefined) sent.end(body);
        else incoming.pipe(sent);
      });
      const received: ProxiedResponse = {
        status: answer.statusCode ?? 502,
        headers: { ...answer.headers },
        body: await read(answer),
      };
      const response = mutation.response?.(request, received) ?? received;
      const out = { ...response.headers };
      delete out['content-length'];
      delete out['transfer-encoding'];
      delete out.connection;
      delete out['keep-alive'];
      out['content-length'] = String(Buffer.byteLength(response.body));
      outgoing.writeHead(response.status, out as http.OutgoingHttpHeaders).end(response.body);
    } catch (error) {
      outgoing.writeHead(502).end(String(error));
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
