// What an operator command is: its name, help, flags and work, and how its command line is read.
import type { Db } from '../../database/connect.js';
import { parse, UsageError } from '../args.js';

/** One flag of a command: its kind, the placeholder of its value in help, and what it means. */
export interface Flag {
  type: 'string' | 'boolean';
  value?: string;
  help: string;
}

/** What a command prints: a text for people, and the value printed with --json; and its exit status (0 unless given). */
export interface Output {
  human: string;
  json: unknown;
  status?: number;
  /** What the operator should know but that did not stop the command, printed on stderr. */
  warnings?: string[];
}

/** The flag values and positional arguments a command runs with. */
export interface Input {
  values: Record<string, string | boolean | undefined>;
  args: string[];
}

/** Opens the database on first call (the same one on later calls); throws when it cannot be reached. */
export type Database = () => Promise<Db>;

/** An operator command, such as `org create`. */
export interface AdminCommand {
  /** The words that name it after `admin`. */
  name: string;
  /** What it does, as a short phrase. */
  summary: string;
  /** What its help says beyond the summary (how it treats its input), if anything. */
  notes?: string;
  /** Its options as written in the usage line, after the name. */
  synopsis: string;
  flags: Record<string, Flag>;
  /** The names of the positional arguments it takes, all required. */
  args?: string[];
  /**
   * Does the work; throws UsageError for a bad command line and DomainError for a refused operation.
   * It imports the services it calls when it runs, so help and usage errors need no database code.
   */
  run(input: Input, database: Database): Promise<Output>;
}

/** The commands about one resource, such as `org create` and `org list`. */
export interface CommandGroup {
  name: string;
  summary: string;
  commands: AdminCommand[];
}

/** Reads `argv` against the command's flags; throws UsageError for unknown flags or a wrong argument count. */
export function readInput(command: AdminCommand, argv: string[]): Input {
  const options = Object.fromEntries(Object.entries(command.flags).map(([name, flag]) => [name, { type: flag.type }]));
  const { values, positionals } = parse(argv, options);
  const expected = command.args ?? [];
  if (positionals.length !== expected.length) {
    throw new UsageError(
      expected.length === 0
        ? `${command.name} takes no arguments, got "${positionals.join(' ')}"`
        : `${command.name} takes exactly ${expected.length === 1 ? 'one' : expected.length} ${expected.join(' ')}`,
    );
  }
  return { values, args: positionals };
}
