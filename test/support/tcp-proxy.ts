// A TCP proxy on 127.0.0.1 in front of another address, for fault tests: it can go silent (keep every
// connection open but pass nothing on, as a hung or partitioned server would) and come back.
import net from 'node:net';
import type { AddressInfo } from 'node:net';

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
  flowing: boolean;
}

export interface TcpProxy {
  port: number;
  /** Stops passing bytes in both directions; connections stay open and new ones are accepted. */
  silence(): void;
  /** Passes bytes again, the held ones first. */
  resume(): void;
  close(): Promise<void>;
}

/** Starts a proxy to `target` (host:port). */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let silent = false;
  const pairs = new Set<Pair>();
  const flow = (pair: Pair, on: boolean) => {
    if (pair.flowing === on) return;
    pair.flowing = on;
    if (on) {
      pair.client.pipe(pair.upstream);
      pair.upstream.pipe(pair.client);
    } else {
      pair.client.unpipe(pair.upstream);
      pair.upstream.unpipe(pair.client);
      pair.client.pause();
      pair.upstream.pause();
    }
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    const pair: Pair = { client, upstream, flowing: false };
    pairs.add(pair);
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
    if (!silent) flow(pair, true);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    silence: () => {
      silent = true;
      for (const pair of pairs) flow(pair, false);
    },
    resume: () => {
      silent = false;
      for (const pair of pairs) flow(pair, true);
    },
    close: async () => {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The database URL `url` rewritten to go through `proxy`. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const rewritten = new URL(url);
  rewritten.hostname = '127.0.0.1';
  rewritten.port = String(proxy.port);
  return rewritten.toString();
}
