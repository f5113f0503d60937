// How a command's result reaches the operator: its output on stdout, or a failure as one line on
// stderr with the exit status that names its kind (2 for a bad command line, 1 for anything else).
import { ConfigError } from '../../config.js';
import { DomainError } from '../../errors.js';
import { UsageError } from '../args.js';
import { printable } from '../terminal-text.js';
import type { Output } from './command.js';

/** An error's code (as Node's system errors carry one), else its name. */
function codeOrName(error: Error): string {
  const { code } = error as { code?: unknown };
  return typeof code === 'string' || typeof code === 'number' ? String(code) : error.name;
}

/** The text of an error on one line; an AggregateError (several addresses tried) gives each cause. */
function oneLine(error: unknown): string {
  const text =
    error instanceof AggregateError && !error.message
      ? error.errors.map((cause) => (cause instanceof Error ? cause.message : String(cause))).join('; ')
      : error instanceof Error
        ? error.message || codeOrName(error)
        : String(error);
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * What a failure means for the operator: a one-line message and the exit status. A bad command line or
 * configuration is 2; a refused operation (DomainError, a bad import file, a schema behind the code), an
 * embedded PostgreSQL that cannot start, a database that cannot be reached or is busy, and anything
 * unexpected are 1.
 */
async function describeFailure(error: unknown): Promise<{ message: string; status: 1 | 2 }> {
  if (error instanceof UsageError) return { message: oneLine(error), status: 2 };
  if (error instanceof ConfigError) return { message: `configuration error: ${oneLine(error)}`, status: 2 };
  // Loaded only now: a usage error is reported without loading the database stack.
  const [
    { databaseFault },
    { SchemaBehindError },
    { ImportFileError },
    { ImportFailedError },
    { EmbeddedPostgresError },
  ] = await Promise.all([
    import('../../database/faults.js'),
    import('../../database/migrate.js'),
    import('../../contacts/csv-rows.js'),
    import('../../contacts/csv-import.js'),
    import('../../database/embedded.js'),
  ]);
  if (
    error instanceof DomainError ||
    error instanceof ImportFileError ||
    error instanceof ImportFailedError ||
    error instanceof SchemaBehindError ||
    error instanceof EmbeddedPostgresError
  ) {
    return { message: oneLine(error), status: 1 };
  }
  const fault = databaseFault(error);
  if (fault === 'unreachable') return { message: `cannot reach the database: ${oneLine(error)}`, status: 1 };
  if (fault === 'busy') return { message: `the database is busy, try again: ${oneLine(error)}`, status: 1 };
  return { message: `unexpected failure: ${oneLine(error)}`, status: 1 };
}

/**
 * Prints a command's output on stdout: JSON with --json (where JSON.stringify escapes every control
 * character), else the text for people with control characters shown as escapes; its warnings go to
 * stderr, one line each ({"warning": "..."} with --json).
 */
export function printOutput(output: Output, json: boolean): void {
  for (const warning of output.warnings ?? []) {
    process.stderr.write(json ? JSON.stringify({ warning }) + '\n' : `Warning: ${printable(warning)}\n`);
  }
  process.stdout.write(
    (json ? JSON.stringify(output.json, null, 2) : printable(output.human, { multiline: true })) + '\n',
  );
}

/**
 * Prints a failure on stderr as one line, {"error": "..."} with --json, pointing a usage error at
 * `hint` (the help command to run) when given; returns the exit status.
 */
export async function printFailure(error: unknown, json: boolean, hint?: string): Promise<1 | 2> {
  const { message, status } = await describeFailure(error);
  if (json) process.stderr.write(JSON.stringify({ error: message }) + '\n');
  else {
    const pointer = error instanceof UsageError && hint ? ` (see "${hint}")` : '';
    process.stderr.write(`Error: ${printable(message)}${pointer}\n`);
  }
  return status;
}
