// Programs some tests need besides Node (a browser, other languages' toolchains). On a developer's
// machine a missing one skips those tests with the command that installs it; under CI=true nothing is
// skipped, so a missing program fails the run.
import { accessSync, constants } from 'node:fs';
import path from 'node:path';

/** Each program a test may need, with the Debian package that brings it. */
const TOOLCHAINS = {
  chromium: { command: '/usr/bin/chromium', apt: 'chromium' },
  go: { command: 'go', apt: 'golang-go' },
  python3: { command: 'python3', apt: 'python3' },
  openssl: { command: 'openssl', apt: 'openssl' },
} as const;

/** A program named in TOOLCHAINS. */
export type Toolchain = keyof typeof TOOLCHAINS;

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function installed(command: string): boolean {
  if (command.includes('/')) return executable(command);
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir !== '' && executable(path.join(dir, command)));
}

/** The path or name to run `tool` by. */
export function commandOf(tool: Toolchain): string {
  return TOOLCHAINS[tool].command;
}

/**
 * Whether the tests needing `tool` are skipped here: only outside CI, when it is not installed; the
 * reason and the install command are printed once.
 */
export function skipWithout(tool: Toolchain): boolean {
  if (process.env.CI === 'true' || installed(TOOLCHAINS[tool].command)) return false;
  console.warn(
    `skipped: the tests that need ${tool} (${TOOLCHAINS[tool].command} is not installed); ` +
      `install it with: apt-get install -y ${TOOLCHAINS[tool].apt}. Under CI=true they run and fail instead.`,
  );
  return true;
}
