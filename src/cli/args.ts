// Argument parsing for the operator CLI (node:util parseArgs), with usage errors as UsageError.
import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A bad command line: the message says what to change; the CLI exits with status 2. */
export class UsageError extends Error {}

type Options = NonNullable<ParseArgsConfig['options']>;

export interface ParsedArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** Parses `argv` against `options`; throws UsageError for unknown or malformed options. */
export function parse(argv: string[], options: Options): ParsedArgs {
  try {
    return parseArgs({
      args: argv,
      options: { ...options, json: { type: 'boolean' } },
      allowPositionals: true,
      strict: true,
    }) as ParsedArgs;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The value of a required string option; throws UsageError naming the flag when absent. */
export function required(values: Record<string, unknown>, name: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** An optional whole-number option; throws UsageError when present but not a whole number. */
export function optionalInteger(values: Record<string, unknown>, name: string): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^-?\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number`);
  return Number(value);
}
