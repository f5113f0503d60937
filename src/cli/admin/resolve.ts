// Finds what an `admin` command line asks for: a usage text, or a command to run with its arguments.
import { UsageError } from '../args.js';
import { wantsHelp } from '../command.js';
import type { AdminCommand, CommandGroup } from './command.js';
import { adminHelp, commandHelp, groupHelp, helpHint } from './help.js';

/** A usage text to print, or a command to run with the arguments after its name. */
export type Resolved = { help: string } | { command: AdminCommand; argv: string[] };

function unknown(words: string, group?: string): UsageError {
  return new UsageError(`Unknown command: ${words}; run "${helpHint(group)}" for the list`);
}

/** Resolves `argv` against `groups`; throws UsageError for an unknown or missing command. */
export function resolve(argv: string[], groups: CommandGroup[]): Resolved {
  const [first, second] = argv;
  if (first === undefined || first === '--help' || first === '-h') return { help: adminHelp(groups) };
  const group = groups.find((candidate) => candidate.name === first);
  if (!group) throw unknown(first);
  const leaf = group.commands.find((command) => command.name === group.name);
  if (leaf) return wantsHelp(argv) ? { help: commandHelp(leaf) } : { command: leaf, argv: argv.slice(1) };
  if (second === undefined || second.startsWith('-')) {
    if (wantsHelp(argv)) return { help: groupHelp(group) };
    const names = group.commands.map((command) => command.name.slice(group.name.length + 1));
    throw new UsageError(`${group.name} needs a command: ${names.join(', ')}; run "${helpHint(group.name)}"`);
  }
  const command = group.commands.find((candidate) => candidate.name === `${group.name} ${second}`);
  if (!command) throw unknown(`${group.name} ${second}`, group.name);
  return wantsHelp(argv) ? { help: commandHelp(command) } : { command, argv: argv.slice(2) };
}
