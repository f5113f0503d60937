// Stoplight Prism as an independent judge: one validating proxy for the whole run, in front of a
// switchboard that forwards each request to the test app named by its x-upstream-port header.
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Readable } from 'node:stream';

/** Where Prism's own log of every exchange goes. */
const PRISM_LOG = path.resolve('coverage/prism.log');

/** The header that tells the switchboard which loopback port (test app) a request is for. */
export const UPSTREAM_PORT_HEADER = 'x-upstream-port';

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** Forwards each request unchanged to 127.0.0.1:<x-upstream-port>. */
function switchboard(): http.Server {
  return http.createServer((request, response) => {
    const port = Number(request.headers[UPSTREAM_PORT_HEADER]);
    if (!Number.isInteger(port) || port <= 0) {
      response.writeHead(502).end(`missing ${UPSTREAM_PORT_HEADER}`);
      return;
    }
    const upstream = http.request(
      { host: '127.0.0.1', port, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on('error', (error) => response.writeHead(502).end(String(error)));
    request.pipe(upstream);
  });
}

/** Runs the prism CLI with `args` and resolves, with what it printed so far, once it listens (60 s at most). */
export async function spawnPrism(
  args: string[],
): Promise<{ child: ChildProcessByStdio<null, Readable, Readable>; output: string }> {
  const child = spawn(path.resolve('node_modules/.bin/prism'), args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`Prism did not start within 60 s:\n${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`Prism exited with ${code}:\n${output}`)));
  });
  return { child, output };
}

/** A loopback port free a moment ago. */
export async function freePort(): Promise<number> {
  const probe = http.createServer();
  const port = await listen(probe);
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** Starts the switchboard and `prism proxy spec/openapi.yaml <switchboard>/api/v1 --errors`; resolves once Prism listens. */
export async function startPrism(): Promise<{ url: string; stop(): Promise<void> }> {
  const board = switchboard();
  const boardPort = await listen(board);
  const port = await freePort();
  const args = [
    'proxy',
    'spec/openapi.yaml',
    `http://127.0.0.1:${boardPort}/api/v1`,
    '--errors',
    '-h',
    '127.0.0.1',
    '-p',
    String(port),
  ];
  const { child, output } = await spawnPrism(args);
  mkdirSync(path.dirname(PRISM_LOG), { recursive: true });
  const log = createWriteStream(PRISM_LOG);
  log.write(output);
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  return {
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM');
      board.closeAllConnections();
      await new Promise((resolve) => board.close(resolve));
    },
  };
}
