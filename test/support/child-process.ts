// Child processes that say when they are ready: spawned with their output kept, and awaited until what
// they print matches a pattern (a server's start-up banner, a benchmark child's address).
import { spawn, type ChildProcess } from 'node:child_process';

/** A child process that printed what was awaited. */
export interface ReadyChild {
  process: ChildProcess;
  /** What the ready pattern matched. */
  match: RegExpExecArray;
  /** Everything it wrote to stdout and stderr so far. */
  output: () => string;
  /** Settles with its exit code (null when a signal ended it) once it has exited. */
  exited: Promise<number | null>;
}

/** How to start a child and what tells that it is ready. */
export interface ReadyOptions {
  env: NodeJS.ProcessEnv;
  /** Matched against everything the child printed so far, after each chunk. */
  ready: RegExp;
  timeoutMs: number;
  /** What to call it in errors. */
  name: string;
}

/**
 * Spawns `command` with `args` (stdin closed) and resolves once its output matches `options.ready`.
 * Rejects, after killing the child, when it exits first or `timeoutMs` passes; the error includes its output.
 */
export async function spawnReady(command: string, args: string[], options: ReadyOptions): Promise<ReadyChild> {
  const child = spawn(command, args, { env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let output = '';
  let awaiting = true;
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    const settle = () => {
      awaiting = false;
      clearTimeout(timer);
      child.off('exit', onExit);
    };
    const fail = (reason: string) => {
      settle();
      child.kill('SIGKILL');
      reject(new Error(`${options.name} ${reason}:\n${output}`));
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      fail(`exited with ${code ?? signal} before it was ready`);
    const timer = setTimeout(() => fail(`did not start within ${options.timeoutMs} ms`), options.timeoutMs);
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      const found = awaiting ? options.ready.exec(output) : null;
      if (!found) return;
      settle();
      resolve(found);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('exit', onExit);
  });
  return { process: child, match, output: () => output, exited };
}
