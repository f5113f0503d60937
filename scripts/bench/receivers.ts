// HTTPS webhook receivers on 127.0.0.1 (keep-alive, certificates from a CA made at bench time) that
// record when each event first reached each of them. Healthy ones answer 200 at once; a hanging one never answers.
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { generate } from 'selfsigned';

/** A throwaway CA (trusted by the server through NODE_EXTRA_CA_CERTS) and a 127.0.0.1 certificate it signed. */
export interface BenchTls {
  caCert: string;
  key: string;
  cert: string;
}

/** Generates the CA and the loopback server certificate. */
export async function generateTls(): Promise<BenchTls> {
  const ca = await generate([{ name: 'commonName', value: 'Benchmark webhook CA' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
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
}

/** The first arrival of one event at one receiver. */
export interface Arrival {
  receiver: number;
  eventId: string;
  /** Milliseconds from the event's created_at to the arrival. */
  latencyMs: number;
  at: number;
}

/** A set of receivers and what reached them. */
export interface ReceiverFarm {
  urls: string[];
  healthy: boolean[];
  /** First arrivals, in order. */
  arrivals: Arrival[];
  /** Every request each receiver got (retries and duplicates included). */
  requestCounts: number[];
  close(): Promise<void>;
}

/** Starts `count` receivers; those whose index is in `hanging` never answer. */
export async function startReceivers(
  tls: BenchTls,
  count: number,
  hanging: ReadonlySet<number>,
): Promise<ReceiverFarm> {
  const seen = new Set<string>();
  const sockets = new Set<Socket>();
  const servers: https.Server[] = [];
  const farm: ReceiverFarm = {
    urls: [],
    healthy: [],
    arrivals: [],
    requestCounts: new Array<number>(count).fill(0),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
    },
  };
  for (let index = 0; index < count; index += 1) {
    const healthy = !hanging.has(index);
    const server = https.createServer(
      { key: tls.key, cert: tls.cert, keepAliveTimeout: 65_000 },
      (request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const at = Date.now();
          farm.requestCounts[index]! += 1;
          const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string; created_at: string };
          const key = `${index}:${envelope.id}`;
          if (!seen.has(key)) {
            seen.add(key);
            farm.arrivals.push({
              receiver: index,
              eventId: envelope.id,
              latencyMs: at - Date.parse(envelope.created_at),
              at,
            });
          }
          if (healthy) response.end('ok');
        });
      },
    );
    server.on('secureConnection', (socket: Socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    farm.urls.push(`https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/${index}`);
    farm.healthy.push(healthy);
  }
  return farm;
}
