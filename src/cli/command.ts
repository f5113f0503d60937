// What every subcommand of the executable shares: how it reports to the operator and exits.
import { ConfigError, loadConfig, type Config } from '../config.js';
import { UsageError } from './args.js';
import { printable } from './terminal-text.js';

/** A subcommand: runs with its arguments and resolves to the process's exit status. */
export type Command = (argv: string[]) => Promise<number>;

/** The configuration, or exits 2 with a one-line message naming the bad variable. */
export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

/** Whether `argv` asks for help. */
export function wantsHelp(argv: string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

/**
 * Runs `work`, printing a usage error (exit 2) or any other failure (exit 1) as one line, never a
 * stack trace; `usage` is printed after a usage error.
 */
export async function reported(usage: string, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof UsageError) {
      // Node's argument parser writes some of its messages over several lines: they are joined into one.
      process.stderr.write(`Error: ${printable(error.message.replace(/\s*\n\s*/g, ' '))}\n\n${usage}`);
      return 2;
    }
    process.stderr.write(`Error: ${printable(error instanceof Error ? error.message : String(error))}\n`);
    return 1;
  }
}
