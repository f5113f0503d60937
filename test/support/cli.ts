// Runs the operator CLI as a separate process against a test database, as an operator would: the built
// executable (dist/src/main.js, what `npm run admin` runs), which the test run's global set-up builds.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { HANG_GUARD_MS } from './hang-guard.js';

/** The built executable the CLI tests run. */
export const MAIN = path.resolve('dist/src/main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `voice-call-api admin ...args` (the built dist/src/main.js) with DATABASE_URL set to `databaseUrl`,
 * and `env` over the test's own environment (a variable set to undefined is removed).
 */
export function runAdmin(
  databaseUrl: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  return runCommand(databaseUrl, ['admin', ...args], env);
}

/** Like runAdmin for any command of the CLI (`migrate --check`, `serve`, ...). */
export function runCommand(
  databaseUrl: string,
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      {
        env: { ...process.env, DATABASE_URL: databaseUrl, ...env },
        timeout: HANG_GUARD_MS,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
