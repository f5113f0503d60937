// `npm run commits:check`: fails when a commit made after BASELINE has a subject line longer than
// MAX_SUBJECT characters. Older commits are landed history, which is never rewritten, so they are not
// judged. Outside a git checkout, or in a clone too shallow to hold BASELINE, it says so and passes.
// Run with Node's own TypeScript support: `node scripts/check-commit-subjects.ts`.
import { execFileSync } from 'node:child_process';

/** The last landed commit before the limit was enforced (issue 39). */
const BASELINE = 'e0fa584';

/** The longest subject line allowed, in characters. */
const MAX_SUBJECT = 72;

/** Runs git with `args`; null when git fails (no repository, unknown commit). */
function git(args: string[]): string | null {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return null;
  }
}

if (git(['cat-file', '-e', `${BASELINE}^{commit}`]) === null) {
  console.log(`commits:check: NOT CHECKED: no git history holding ${BASELINE} here`);
  process.exit(0);
}
const log = git(['log', '--format=%h%x09%s', `${BASELINE}..HEAD`]) ?? '';
const commits = log.split('\n').filter((line) => line !== '');
const long = commits.filter((line) => [...line.slice(line.indexOf('\t') + 1)].length > MAX_SUBJECT);
for (const line of long) {
  const [hash, subject] = line.split('\t') as [string, string];
  console.error(`${hash}: ${[...subject].length} characters: ${subject}`);
}
if (long.length > 0) {
  console.error(
    `commits:check: ${long.length} commit subject(s) over ${MAX_SUBJECT} characters (details go in the body)`,
  );
  process.exit(1);
}
console.log(
  `commits:check: ${commits.length} commit(s) since ${BASELINE}, every subject within ${MAX_SUBJECT} characters`,
);
