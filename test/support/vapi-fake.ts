// A scripted stand-in for Vapi's API on a loopback port, for the cases a Prism mock cannot play (an
// ending chosen by the test, 500, 429, a slow or broken connection, the live-call control URL). It
// checks each request body the adapter sends, and each call it answers with, against the vendor's schemas.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { assertVendorSchema } from './vapi.js';

type Json = Record<string, unknown>;

/** One scripted answer, used instead of the normal one for the next matching request. */
export interface Scripted {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Wait for this before answering (after the delay). */
  gate?: Promise<void>;
  /** Break the connection instead of answering. */
  destroy?: boolean;
  /** Do what the request asks (create the call) first, then answer as scripted (by default with the call). */
  act?: boolean;
}

/** A request the fake received. */
export interface Received {
  method: string;
  path: string;
  authorization: string | undefined;
  body: Json | null;
}

/** The fake and its knobs. */
export interface VapiFake {
  url: string;
  /** The calls it holds, by id (tests change them to play a call's progress). */
  calls: Map<string, Json>;
  received: Received[];
  /** What broke the vendor's schemas (a request body the adapter sent, or a call the fake was made to hold). */
  violations: string[];
  /** Answers the next request whose "METHOD /path-prefix" starts with `route` as scripted. */
  script(route: string, answer: Scripted): void;
  stop(): Promise<void>;
}

async function readBody(request: http.IncomingMessage): Promise<Json | null> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Json) : null;
}

/** Starts the fake on 127.0.0.1, its schema checks compiled first (not inside a request's deadline). */
export async function startVapiFake(): Promise<VapiFake> {
  assertVendorSchema('CreateCallDTO', { assistantId: 'a', phoneNumberId: 'p', customer: { number: '+15550100' } });
  const calls = new Map<string, Json>();
  const received: Received[] = [];
  const violations: string[] = [];
  const scripts: Array<{ route: string; answer: Scripted }> = [];
  let url = '';

  const create = (body: Json): Json => {
    assertVendorSchema('CreateCallDTO', body);
    const id = randomUUID();
    const now = new Date().toISOString();
    const call: Json = {
      id,
      orgId: '7b7f0f0e-0000-4000-8000-000000000001',
      type: 'outboundPhoneCall',
      status: 'queued',
      createdAt: now,
      updatedAt: now,
      assistantId: body['assistantId'],
      phoneNumberId: body['phoneNumberId'],
      customer: body['customer'],
      assistantOverrides: body['assistantOverrides'],
      monitor: { controlUrl: `${url}/control/${id}` },
    };
    calls.set(id, call);
    return call;
  };

  const answer = (
    response: http.ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(text);
  };

  const server = http.createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      violations.push(String(error));
      if (!response.headersSent) answer(response, 400, { message: String(error) });
    });
  });
  const handle = async (request: http.IncomingMessage, response: http.ServerResponse) => {
    const path = request.url ?? '/';
    const body = await readBody(request).catch(() => null);
    received.push({ method: request.method ?? '', path, authorization: request.headers.authorization, body });
    const route = `${request.method} ${path}`;
    const index = scripts.findIndex((entry) => route.startsWith(entry.route));
    const scripted = index >= 0 ? scripts.splice(index, 1)[0]!.answer : null;
    const created = scripted?.act && request.method === 'POST' && path === '/call' && body ? create(body) : null;
    if (scripted?.delayMs) await new Promise((resolve) => setTimeout(resolve, scripted.delayMs));
    if (scripted?.gate) await scripted.gate;
    if (scripted?.destroy) {
      request.socket.destroy();
      return;
    }
    if (scripted) {
      answer(response, scripted.status ?? 200, scripted.body ?? created ?? undefined, scripted.headers);
      return;
    }
    if (request.method === 'POST' && path === '/call' && body) {
      const call = create(body);
      assertVendorSchema('Call', call);
      answer(response, 201, call);
      return;
    }
    const one = /^\/call\/([^/?]+)$/.exec(path);
    if (request.method === 'GET' && one) {
      const call = calls.get(decodeURIComponent(one[1]!));
      if (!call) {
        answer(response, 404, { message: 'Not Found', statusCode: 404 });
        return;
      }
      assertVendorSchema('Call', call);
      answer(response, 200, call);
      return;
    }
    if (request.method === 'GET' && path.startsWith('/call?')) {
      const query = new URL(path, url).searchParams;
      const from = Date.parse(query.get('createdAtGe') ?? '') || 0;
      const to = Date.parse(query.get('createdAtLe') ?? '') || Infinity;
      const listed = [...calls.values()].filter((call) => {
        const at = Date.parse(call['createdAt'] as string);
        return at >= from && at <= to;
      });
      answer(response, 200, listed);
      return;
    }
    const control = /^\/control\/([^/?]+)$/.exec(path);
    if (request.method === 'POST' && control && body?.['type'] === 'end-call') {
      const call = calls.get(control[1]!);
      if (!call) {
        answer(response, 404, { message: 'Not Found' });
        return;
      }
      Object.assign(call, { status: 'ended', endedReason: 'manually-canceled', endedAt: new Date().toISOString() });
      answer(response, 200, { success: true });
      return;
    }
    answer(response, 404, { message: 'Not Found' });
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    calls,
    received,
    violations,
    script: (route, scriptedAnswer) => scripts.push({ route, answer: scriptedAnswer }),
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
