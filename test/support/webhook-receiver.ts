// HTTPS webhook receivers on 127.0.0.1 for tests (src/tools/https-receiver.ts), trusted through a
// throwaway CA made once per test file, with behaviours that answer well or badly.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startHttpsReceiver, type ReceivedRequest } from '../../src/tools/https-receiver.js';
import {
  makeLocalTls,
  makeServerCertificate,
  type LocalTls,
  type ServerCertificate,
} from '../../src/tools/local-ca.js';

export type { ReceivedRequest };

let cached: Promise<LocalTls> | null = null;

/** The test CA and the 127.0.0.1 certificate it signed, made once per test file; rejects when they cannot be made. */
export function testTls(): Promise<LocalTls> {
  cached ??= makeLocalTls({ caName: 'Webhook test CA' });
  return cached;
}

/** A self-signed certificate for 127.0.0.1 that no test CA signed (for TLS failures); rejects if it cannot be made. */
export function untrustedTls(): Promise<ServerCertificate> {
  return makeServerCertificate();
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

/** A running test receiver: what reached it, and its behaviour. */
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
  /** Cuts every open connection and stops listening. */
  close(): Promise<void>;
}

/**
 * Starts an HTTPS receiver on 127.0.0.1 that records every request, then answers with `behaviour`; rejects when
 * it cannot listen.
 */
export async function startReceiver(
  behaviour: Behaviour = answer(200, 'ok'),
  tls?: ServerCertificate,
): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const started: number[] = [];
  const waiters: Array<() => void> = [];
  let pending = 0;
  const server = await startHttpsReceiver({
    tls: tls ?? (await testTls()),
    onArrival: (_request, response) => {
      started.push(Date.now());
      pending += 1;
      response.once('close', () => (pending -= 1));
    },
    answer: (received, request, response) => {
      requests.push(received);
      for (const waiter of [...waiters]) waiter();
      receiver.behaviour(request, response);
    },
  });
  const receiver: Receiver = {
    url: `${server.origin}/hooks`,
    port: server.port,
    requests,
    started,
    get pending() {
      return pending;
    },
    behaviour,
    waitFor: (count, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => requests.length >= count;
        if (check()) return resolve(requests);
        const timer = setTimeout(
          () => reject(new Error(`expected ${count} requests, got ${requests.length}`)),
          timeoutMs,
        );
        waiters.push(() => {
          if (!check()) return;
          clearTimeout(timer);
          resolve(requests);
        });
      }),
    close: () => server.close(),
  };
  return receiver;
}
