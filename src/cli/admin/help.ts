// The usage texts of `voice-call-api admin`, of each command group and of each command.
import type { AdminCommand, CommandGroup } from './command.js';

const PROGRAM = 'voice-call-api admin';

const COMMON = `Every command also takes:
  --json       print the result as JSON on stdout, and a failure as {"error": "..."} on stderr
  -h, --help   print the command's usage

Exit status: 0 done; 1 refused or failed (an unknown id, a bad value, no database); 2 a bad command line.
`;

function columns(rows: Array<[string, string]>, width = Math.max(...rows.map(([left]) => left.length))): string {
  return rows.map(([left, right]) => `  ${left.padEnd(width)}   ${right}`.trimEnd()).join('\n');
}

function sentence(phrase: string): string {
  return `${phrase[0]!.toUpperCase()}${phrase.slice(1)}.`;
}

/** The command that prints the usage of `name` (a command or a group), for hints in messages. */
export function helpHint(name?: string): string {
  return `${PROGRAM}${name ? ` ${name}` : ''} --help`;
}

/** The usage of `voice-call-api admin`: every command with what it does, group by group. */
export function adminHelp(groups: CommandGroup[]): string {
  const width = Math.max(...groups.flatMap((group) => group.commands.map((command) => command.name.length)));
  const sections = groups.map(
    (group) =>
      `${sentence(group.summary)}\n${columns(
        group.commands.map((command): [string, string] => [command.name, command.summary]),
        width,
      )}`,
  );
  return `Usage: ${PROGRAM} <command> [options] [--json]
       npm run admin -- <command> [options] [--json]   (from a checkout)

The operator's commands. They work on the database the service uses: DATABASE_URL, or the embedded
PostgreSQL under DATA_DIR when it is unset, whether or not the server is running.

${sections.join('\n\n')}

Run "${PROGRAM} <command> --help" for a command's options.

${COMMON}`;
}

/** The usage of a command group, such as `org`: each command's synopsis and what it does. */
export function groupHelp(group: CommandGroup): string {
  const entries = group.commands.map(
    (command) => `  ${`${command.name} ${command.synopsis}`.trimEnd()}\n      ${command.summary}`,
  );
  return `Usage: ${PROGRAM} ${group.name} <command> [options] [--json]

${sentence(group.summary)}

Commands:
${entries.join('\n')}

Run "${PROGRAM} ${group.name} <command> --help" for a command's options.
`;
}

/** The usage of one command: its synopsis, what it does and each option. */
export function commandHelp(command: AdminCommand): string {
  const rows = Object.entries(command.flags).map(([name, flag]): [string, string] => [
    `--${name}${flag.value ? ` ${flag.value}` : ''}`,
    flag.help,
  ]);
  rows.push(['--json', 'print the result as JSON'], ['-h, --help', 'print this usage']);
  return `Usage: ${PROGRAM} ${command.name} ${command.synopsis ? `${command.synopsis} ` : ''}[--json]

${sentence(command.summary)}
${command.notes ? `\n${command.notes}\n` : ''}
Options:
${columns(rows)}
`;
}
