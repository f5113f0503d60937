// The service as a child process, for start-up tests: started in its own process group (so it and its
// embedded PostgreSQL can be killed together), stopped with SIGTERM, or run once as a CLI command.
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';

const started: ChildProcess[] = [];

/** The environment of a service without DATABASE_URL (so it uses its embedded PostgreSQL), plus `extra`. */
export function embeddedEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', ...extra };
  delete env.DATABASE_URL;
  delete env.TEST_DATABASE_URL;
  return env;
}

/**
 * Runs `command` (by default `npm start`: the build, then the service from dist/) and resolves with its
 * output so far once it logs that it started; rejects when it exits first or after 90 s.
 */
export function startService(
  env: NodeJS.ProcessEnv,
  options: { command?: string[]; cwd?: string } = {},
): Promise<{ child: ChildProcess; output: string }> {
  const [program, ...args] = options.command ?? ['npm', 'start', '--silent'];
  const child = spawn(program!, args, { env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  started.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`no banner in time:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('"msg":"started"')) {
        clearTimeout(timer);
        resolve({ child, output });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`exited early with ${code}:\n${output}`)));
  });
}

/** SIGTERM to the service (npm execs node, so it gets the signal); resolves with the exit code. */
export function stopService(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill('SIGTERM');
  });
}

/** Runs `node dist/src/main.js <args>` in `cwd` to its end (at most 60 s). */
export function runCommand(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['dist/src/main.js', ...args], { env, cwd, detached: true });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Kills the process group of everything started here, with whatever it left running. */
export function killStarted(): void {
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // The group has already exited.
    }
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
