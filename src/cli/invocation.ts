// How the operator runs this executable, so that a printed hint is a command that works where it is
// printed: `npm run admin -- …` when one of the project's npm scripts started the process (npm start,
// npm run admin...), `voice-call-api admin …` when it was started through the installed command, else
// `node <path to main.js> admin …`. A path typed on the command line is read from where it was typed.
import path from 'node:path';

/** The npm scripts of this package that run the executable (npm passes the name on to what it starts). */
const OWN_SCRIPTS = new Set(['start', 'admin', 'migrate', 'webhook:listen', 'conformance']);

/** Whether one of this package's npm scripts started the process. */
function startedByOwnScript(env: NodeJS.ProcessEnv): boolean {
  return env.npm_package_name === 'voice-call-api' && OWN_SCRIPTS.has(env.npm_lifecycle_event ?? '');
}

/** The command line that runs `admin` the way this process was started, without a trailing space. */
export function adminCommand(env: NodeJS.ProcessEnv = process.env, argv: readonly string[] = process.argv): string {
  if (startedByOwnScript(env)) return 'npm run admin --';
  const script = argv[1] ?? 'dist/src/main.js';
  if (path.basename(script) === 'voice-call-api') return 'voice-call-api admin';
  const relative = path.relative(process.cwd(), script);
  return `node ${relative.startsWith('..') ? script : relative} admin`;
}

/**
 * A path the operator typed, taken from the directory they typed it in: npm runs this package's scripts
 * from the package's root, and names the directory it was started from in INIT_CWD.
 */
export function typedPath(file: string, env: NodeJS.ProcessEnv = process.env): string {
  return startedByOwnScript(env) && env.INIT_CWD ? path.resolve(env.INIT_CWD, file) : file;
}
