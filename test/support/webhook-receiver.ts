// HTTPS webhook receivers on 127.0.0.1 for tests, with a throwaway CA generated at test time.
import https from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { generate } from 'selfsigned';

/** A test CA and a server certificate it signed for 127.0.0.1. */
export interface TestTls {
  caCert: string;
  key: string;
  cert: string;
}

let cached: Promise<TestTls> | null = null;

/** The throwaway CA and 127.0.0.1 certificate (generated once per test file). */
export function testTls(): Promise<TestTls> {
  cached ??= (async () => {
    const ca = await generate([{ name: 'commonName', value: 'Webhook test CA' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      extensions: [
        { name: 'basicConstraints', cA: true, critical: true },
        { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      ],
    });
    const leaf = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
      keyType: 'ec',
      algorithm: 'sha256',
      ca: { key: ca.private, cert: ca.cert },
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
      ],
    });
    return { caCert: ca.cert, key: leaf.private, cert: leaf.cert };
  })();
  return cached;
}

/** A certificate for 127.0.0.1 that no test CA signed (for TLS failures). */
export async function untrustedTls(): Promise<{ key: string; cert: string }> {
  const self = await generate([{ name: 'commonName', value: '127.0.0.1' }], { keyType: 'ec', algorithm: 'sha256' });
  return { key: self.private, cert: self.cert };
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  receivedAt: number;
}

/** How a receiver answers one request (after its body was read). */
export type Behaviour = (request: IncomingMessage, response: ServerResponse) => void;

/** Answers with `status`, an optional body and headers. */
export const answer =
  (status: number, body = '', headers: Record<string, string> = {}): Behaviour =>
  (_request, response) => {
    response.writeHead(status, headers);
    response.end(body);
  };

/** Answers 200 `ok` after `ms` (the timer does not keep the process alive). */
export const slowly =
  (ms: number): Behaviour =>
  (_request, response) => {
    setTimeout(() => response.writeHead(200).end('ok'), ms).unref();
  };

/** Never answers (until the receiver closes). */
export const hang: Behaviour = () => undefined;

/** Cuts the connection without answering. */
export const reset: Behaviour = (request) => request.socket.destroy();

/** Answers 200 with an endless-looking body of `megabytes` MB, written as fast as it is read. */
export const hugeBody =
  (megabytes: number): Behaviour =>
  (_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    const chunk = 'x'.repeat(64 * 1024);
    let left = Math.ceil((megabytes * 1024 * 1024) / chunk.length);
    const pump = () => {
      while (left > 0) {
        left -= 1;
        if (!response.write(chunk)) return void response.once('drain', pump);
      }
      response.end();
    };
    response.on('error', () => undefined);
    pump();
  };

export interface Receiver {
  url: string;
  port: number;
  /** The requests whose body arrived in full, in order of arrival. */
  requests: ReceivedRequest[];
  /** When each request began to arrive (its headers were read), whether or not its body ever completed. */
  started: number[];
  /** Requests that began to arrive and whose connection is still open with no answer sent. */
  readonly pending: number;
  /** The current behaviour; replace it at any time. */
  behaviour: Behaviour;
  /** Resolves once at least `count` requests arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** Starts an HTTPS receiver on 127.0.0.1 that records every request, then answers with `behaviour`. */
export async function startReceiver(
  behaviour: Behaviour = answer(200, 'ok'),
  tls?: { key: string; cert: string },
): Promise<Receiver> {
  const { key, cert } = tls ?? (await testTls());
  const sockets = new Set<Socket>();
  const waiters: Array<() => void> = [];
  let pending = 0;
  const receiver: Receiver = {
    url: '',
    port: 0,
    requests: [],
    started: [],
    get pending() {
      return pending;
    },
    behaviour,
    waitFor: (count, timeoutMs = 5_000) =>
      new Promise((resolve, reject) => {
        const check = () => receiver.requests.length >= count;
        if (check()) return resolve(receiver.requests);
        const timer = setTimeout(
          () => reject(new Error(`expected ${count} requests, got ${receiver.requests.length}`)),
          timeoutMs,
        );
        waiters.push(() => {
          if (!check()) return;
          clearTimeout(timer);
          resolve(receiver.requests);
        });
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = https.createServer({ key, cert }, (request, response) => {
    receiver.started.push(Date.now());
    pending += 1;
    response.once('close', () => (pending -= 1));
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      receiver.requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        rawBody: Buffer.concat(chunks).toString('utf8'),
        receivedAt: Date.now(),
      });
      for (const waiter of [...waiters]) waiter();
      receiver.behaviour(request, response);
    });
  });
  // Every TCP connection, from accept on: one still in its TLS handshake when close() is called would
  // otherwise keep server.close() waiting until the client gives up (undici, for one, dials again when
  // a request in flight is aborted).
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `https://127.0.0.1:${receiver.port}/hooks`;
  return receiver;
}
