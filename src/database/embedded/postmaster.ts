// Runs a cluster's server as a child process, as the cluster user: TCP on 127.0.0.1 only and no unix
// socket (so no socket directory has to be writable), its output appended to a log file.
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type { PostgresBinaries } from './binaries.js';
import { runAs, type ClusterUser } from './cluster-user.js';
import { failureLine } from './failure-line.js';

/** A running server. */
export interface Postmaster {
  /** Stops the server (fast shutdown: open sessions are cut) and resolves once it has exited. */
  stop(): Promise<void>;
}

const READY = 'database system is ready to accept connections';
const START_TIMEOUT_MS = 60_000;

/**
 * Starts postgres on the cluster in `dir` and resolves once it accepts connections on 127.0.0.1:`port`.
 * Throws a one-line error with the server's reason (and what to do when the port is taken) when it
 * exits or has not started within a minute.
 */
export async function startPostmaster(options: {
  binaries: PostgresBinaries;
  dir: string;
  port: number;
  user: ClusterUser | null;
  logFile: string;
}): Promise<Postmaster> {
  const { binaries, dir, port, user, logFile } = options;
  const log = createWriteStream(logFile, { flags: 'a', mode: 0o600 });
  const child = spawn(
    binaries.postgres,
    [
      ...['-D', dir, '-p', String(port)],
      ...['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'lc_messages=C'],
    ],
    { ...runAs(user), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    let output: string | null = '';
    const fail = (reason: string) => {
      clearTimeout(timer);
      reject(new Error(`the embedded PostgreSQL did not start on 127.0.0.1:${port}: ${reason} (log: ${logFile})`));
    };
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(`not ready after ${START_TIMEOUT_MS / 1000} s`);
    }, START_TIMEOUT_MS);
    const onOutput = (chunk: Buffer) => {
      log.write(chunk);
      if (output === null) return;
      output += chunk.toString();
      if (output.includes(READY)) {
        output = null;
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    child.once('error', (error: NodeJS.ErrnoException) => fail(`could not run ${binaries.postgres} (${error.code})`));
    child.once('exit', () => {
      if (output === null) return;
      const reason = failureLine(output);
      fail(
        reason.includes('could not bind')
          ? `${reason}; stop what uses port ${port} or set EMBEDDED_PG_PORT to a free port`
          : reason,
      );
    });
  });
  try {
    await ready;
  } catch (error) {
    log.end();
    throw error;
  }
  return {
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
      log.end();
    },
  };
}
