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
    });
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

/** A required whole-number option; throws UsageError when absent or not a whole number. */
export function requiredInteger(values: Record<string, unknown>, name: string): number {
  const value = optionalInteger(values, name);
  if (value === undefined) throw new UsageError(`--${name} is required`);
  return value;
}

/** An optional string option, or undefined when absent. */
export function optionalString(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value : undefined;
}

/** An optional true/false option; throws UsageError when present but neither. */
export function optionalBoolean(values: Record<string, unknown>, name: string): boolean | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new UsageError(`--${name} must be true or false`);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A positional argument holding a UUID; throws UsageError, naming it by `label` (WEBHOOK_ID), when malformed. */
export function uuidArgument(value: string | undefined, label: string, what: string): string {
  if (value === undefined || !UUID.test(value)) throw new UsageError(`${label} must be ${what} (a UUID)`);
  return value;
}

/** A required option holding a UUID; throws UsageError, saying it must be `what`, when absent or malformed. */
export function requiredUuid(values: Record<string, unknown>, name: string, what: string): string {
  const value = required(values, name);
  if (!UUID.test(value)) throw new UsageError(`--${name} must be ${what} (a UUID)`);
  return value;
}

/** The `--mode` option: `live` (the default) or `test`; throws UsageError for anything else. */
export function modeOption(values: Record<string, unknown>): 'live' | 'test' {
  const value = values.mode ?? 'live';
  if (value === 'live' || value === 'test') return value;
  throw new UsageError('--mode must be live or test');
}

/** The flag definition of `--mode`, for commands that act in one mode. */
export const MODE_FLAG = {
  type: 'string',
  value: 'live|test',
  help: 'the mode: live (the default) or test (test keys, test data and the test balance)',
} as const;
