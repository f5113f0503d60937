// `npm start` on a machine without DATABASE_URL: embedded PostgreSQL, demo data, graceful stop, restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const children: ChildProcess[] = [];

afterAll(() => {
  // Each `npm start` leads its own process group (detached), so the service and its embedded
  // PostgreSQL go too, even when a failed test left them running.
  for (const child of children) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // The group has already exited.
    }
  }
});

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Runs `npm start` (the build, then the service from dist/) and resolves with its banner once it is listening. */
function start(env: NodeJS.ProcessEnv): Promise<{ child: ChildProcess; banner: string }> {
  const child = spawn('npm', ['start', '--silent'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no banner in time:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"msg":"started"')) {
        clearTimeout(timer);
        resolve({ child, banner: output });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited early with ${code}:\n${output}`)));
  });
}

/** SIGTERM to `npm start`, which passes it to the service (the script execs node); resolves with npm's exit code. */
function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

describe('start without DATABASE_URL', () => {
  it('boots an embedded PostgreSQL, seeds a demo org once, serves the API, and stops cleanly', async () => {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'voice-start-'));
    const pgPort = await freePort();
    const httpPort = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATA_DIR: dataDir,
      EMBEDDED_PG_PORT: String(pgPort),
      PORT: String(httpPort),
      LOG_LEVEL: 'info',
    };
    delete env.DATABASE_URL;
    delete env.TEST_DATABASE_URL;

    const first = await start(env);
    const key = /API key\s*:\s*(svc_live_\S+)/.exec(first.banner)?.[1];
    expect(key, first.banner).toBeDefined();
    expect(first.banner).toContain(`http://127.0.0.1:${httpPort}/api/v1`);
    expect(first.banner).toContain(`http://127.0.0.1:${httpPort}/docs`);
    expect(first.banner).toContain('curl -s -X POST');

    const response = await fetch(`http://127.0.0.1:${httpPort}/api/v1/contacts`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(response.status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${httpPort}/readyz`)).status).toBe(200);

    expect(await stop(first.child)).toBe(0);
    expect(await portAnswers(httpPort)).toBe(false);
    expect(await portAnswers(pgPort)).toBe(false);

    const second = await start(env);
    expect(second.banner).not.toMatch(/API key\s*:/);
    expect(second.banner).toContain('key create --org');
    // The first key still works: the data survived the restart.
    const again = await fetch(`http://127.0.0.1:${httpPort}/api/v1/contacts`, {
      headers: { Authorization: `Bearer ${key}` },
    });
    expect(again.status).toBe(200);
    expect(await stop(second.child)).toBe(0);
  }, 180_000);
});
