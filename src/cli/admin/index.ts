// `voice-call-api admin <command>` (`npm run admin -- <command>` in a checkout): the operator's
// commands, standing in for a dashboard. Output for people by default and JSON with --json; a failure
// is one line on stderr, with exit status 2 for a bad command line and 1 for anything else.
import { printFailure, printOutput } from './report.js';
import { readInput } from './command.js';
import { GROUPS } from './commands.js';
import { helpHint } from './help.js';
import { resolve, type Resolved } from './resolve.js';
import { lazyDatabase } from './database.js';

/** The admin command: runs one operator command; 0 on success, 1 when it failed, 2 on a usage error. */
export async function admin(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  let resolved: Resolved;
  try {
    resolved = resolve(argv, GROUPS);
  } catch (error) {
    return printFailure(error, json);
  }
  if ('help' in resolved) {
    process.stdout.write(resolved.help);
    return 0;
  }
  const { command } = resolved;
  const { database, close } = lazyDatabase();
  try {
    const output = await command.run(readInput(command, resolved.argv), database);
    printOutput(output, json);
    return output.status ?? 0;
  } catch (error) {
    return await printFailure(error, json, helpHint(command.name));
  } finally {
    await close();
  }
}
