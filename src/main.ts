#!/usr/bin/env node
// The service's one executable: `voice-call-api <command>`, run from the build (dist/src/main.js) in
// production and through tsx in development (`npm start`, `npm run migrate`, `npm run admin`, ...).
import type { Command } from './cli/command.js';
import { unsupportedNode } from './cli/node-version.js';

const USAGE = `Usage: voice-call-api <command> [options]

Commands:
  serve [--role api|worker|all] [--processes N]   run the service (default: all roles, one process)
  migrate [--status | --check]                     apply pending database migrations, or list them
  admin <command> ...                              the operator's commands (orgs, agents, keys, plans, ...)
  webhook:listen [options]                         a local HTTPS receiver that verifies, prints and forwards deliveries
  conformance --base-url URL [options]             check a deployment against its published spec (a test key in
                                                   VOICE_CALL_API_KEY; a live key only with --allow-live)

Run \`voice-call-api <command> --help\` for a command's options. Every setting is an environment
variable; see .env.example.
`;

const COMMANDS: Record<string, () => Promise<{ run: Command }>> = {
  serve: async () => ({ run: (await import('./cli/serve.js')).serve }),
  migrate: async () => ({ run: (await import('./cli/migrate.js')).migrate }),
  admin: async () => ({ run: (await import('./cli/admin/index.js')).admin }),
  'webhook:listen': async () => ({ run: (await import('./cli/webhook-listen.js')).webhookListen }),
  conformance: async () => ({ run: (await import('./cli/conformance.js')).conformance }),
};

async function main(argv: string[]): Promise<number> {
  // Before any command is loaded, so the reason is said rather than a dependency's failure at import.
  const unsupported = unsupportedNode(process.versions.node);
  if (unsupported) {
    process.stderr.write(`${unsupported} (${process.execPath}).\n`);
    return 1;
  }
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    process.stderr.write(`Unknown command: ${name}\n\n${USAGE}`);
    return 2;
  }
  return (await load()).run(rest);
}

/** Resolves once everything written to `stream` so far has been handed to the operating system. */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => stream.write('', () => resolve()));
}

/**
 * Exits with `code` once stdout and stderr are flushed: a write to a pipe that is full (output over the
 * pipe's 64 KiB, read by `jq` or a script) completes later, and exiting before it would cut the output.
 */
async function exitWith(code: number): Promise<never> {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

// A reader that stopped early (`migrate --status | head -1`) closed stdout: the rest of the output is not
// wanted, and the command goes on to its own exit status rather than crashing on EPIPE.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
});

// A command resolves once it is done (serve: once it has stopped); exit explicitly, so no handle left
// open keeps the process alive and no exit hook of a dependency changes the status.
main(process.argv.slice(2)).then(
  (code) => exitWith(code),
  (error: unknown) => {
    process.stderr.write(`Error: ${error instanceof Error ? error.message : String(error)}\n`);
    return exitWith(1);
  },
);
