// An HTTPS server on a local port that reads each request in full, records it and lets its owner answer;
// it keeps every connection from the moment it is accepted, so closing it never waits on a client. An
// owner may refuse a request from its headers alone and cap the body, so that what it will not accept
// is never read into memory.
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ServerCertificate } from './local-ca.js';

/** One request whose body arrived in full. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body decoded as UTF-8. */
  rawBody: string;
  /** The body's bytes exactly as they arrived (for signature checks). */
  bytes: Buffer;
  /** When the body had arrived, in milliseconds since the epoch. */
  receivedAt: number;
}

/** Where to listen, with which certificate, and how to answer. */
export interface HttpsReceiverOptions {
  tls: ServerCertificate;
  /** Answers a request once its body arrived (or never, to leave it hanging). */
  answer(received: ReceivedRequest, request: IncomingMessage, response: ServerResponse): void;
  /** Sees each request as it begins to arrive (its headers were read), whether or not its body ever completes. */
  onArrival?(request: IncomingMessage, response: ServerResponse): void;
  /**
   * Looks at a request's headers before any of its body is read: an answer returned here is sent at once
   * and the body is never read (the connection closes). Null lets the request in.
   */
  screen?(request: IncomingMessage): { status: number; body: string } | null;
  /** The largest body read, in bytes; a longer one is answered 413 and its connection closed. Unlimited unless given. */
  maxBodyBytes?: number;
  /** The address to listen on: 127.0.0.1 unless given. */
  host?: string;
  /** The port: any free one unless given. */
  port?: number;
  /** How long an idle keep-alive connection stays open, in milliseconds (Node's default unless given). */
  keepAliveTimeout?: number;
}

/** A listening receiver. */
export interface HttpsReceiver {
  /** `https://host:port`, an IPv6 host in brackets. */
  origin: string;
  port: number;
  /** Cuts every open connection and stops listening. */
  close(): Promise<void>;
}

function bodyTooLarge(max: number): { status: number; body: string } {
  return { status: 413, body: JSON.stringify({ error: `the body is over ${max} bytes` }) };
}

/** The 413 for a request whose declared length is over `max`, or null. */
function tooLarge(request: IncomingMessage, max: number | undefined): { status: number; body: string } | null {
  const declared = Number(request.headers['content-length'] ?? 0);
  return max !== undefined && declared > max ? bodyTooLarge(max) : null;
}

/** Answers `refusal` at once, reads nothing more of the request and closes its connection once sent. */
function refuse(request: IncomingMessage, response: ServerResponse, refusal: { status: number; body: string }): void {
  if (!response.headersSent) {
    response.writeHead(refusal.status, { 'content-type': 'application/json', connection: 'close' }).end(refusal.body);
  }
  request.pause();
  response.once('finish', () => request.socket.destroy());
}

/** Starts an HTTPS receiver; rejects when it cannot listen (the port is taken, the address is not local). */
export async function startHttpsReceiver(options: HttpsReceiverOptions): Promise<HttpsReceiver> {
  const host = options.host ?? '127.0.0.1';
  const sockets = new Set<Socket>();
  const server = https.createServer(
    {
      key: options.tls.key,
      cert: options.tls.cert,
      ...(options.keepAliveTimeout !== undefined ? { keepAliveTimeout: options.keepAliveTimeout } : {}),
    },
    (request, response) => {
      options.onArrival?.(request, response);
      const refusal = options.screen?.(request) ?? tooLarge(request, options.maxBodyBytes);
      if (refusal) return refuse(request, response, refusal);
      const chunks: Buffer[] = [];
      let length = 0;
      request.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (options.maxBodyBytes !== undefined && length > options.maxBodyBytes) {
          chunks.length = 0;
          refuse(request, response, bodyTooLarge(options.maxBodyBytes));
          return;
        }
        chunks.push(chunk);
      });
      request.on('end', () => {
        if (response.headersSent) return;
        const bytes = Buffer.concat(chunks);
        const received: ReceivedRequest = {
          method: request.method ?? '',
          path: request.url ?? '',
          headers: request.headers,
          rawBody: bytes.toString('utf8'),
          bytes,
          receivedAt: Date.now(),
        };
        options.answer(received, request, response);
      });
    },
  );
  // Every TCP connection, from accept on: one still in its TLS handshake when close() is called would
  // otherwise keep server.close() waiting until the client gives up (undici, for one, dials again when
  // a request in flight is aborted).
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    origin: `https://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
