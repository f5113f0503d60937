// The provider-placement phase's stand-in for Vapi (./provider-placement.ts), in a process of its own so
// that its server never shares an event loop with the client that times the placements. POST /call
// answers 201 after the milliseconds given as the first argument and remembers how long it held each
// request, by the call id our service carries in the assistant's metadata; GET /held answers those times
// as one JSON object. Prints `listening on URL` once it accepts connections.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const latencyMs = Number(process.argv[2]);
if (!Number.isFinite(latencyMs) || latencyMs < 0) throw new Error('usage: mock-vapi.ts LATENCY_MS');

const heldMs: Record<string, number> = {};

const server = http.createServer((request, response) => {
  const started = performance.now();
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    if (request.method === 'GET' && request.url === '/held') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(heldMs));
      return;
    }
    if (request.method !== 'POST' || request.url !== '/call') {
      response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      assistantOverrides?: { metadata?: { platformCallId?: string } };
    };
    const callId = body.assistantOverrides?.metadata?.platformCallId ?? '';
    const id = randomUUID();
    setTimeout(() => {
      const now = new Date().toISOString();
      const call = { id, orgId: randomUUID(), createdAt: now, updatedAt: now, status: 'queued' };
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(JSON.stringify(call), () => {
        heldMs[callId] = performance.now() - started;
      });
    }, latencyMs);
  });
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
