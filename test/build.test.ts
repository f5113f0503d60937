// The build behind `npm start` and `npm run admin|migrate|webhook:listen` in a checkout
// (scripts/run-built.sh), on a copy of the sources: it writes nothing when they did not change, and
// commands started while another one rebuilds run whole builds, old or new, never a mix.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve('.');
let copy: string;

/** Runs `command` with `args` in the copy; resolves with its exit status and output. */
function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: copy, timeout: 240_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** Every file under dist/ with its modification time. */
async function distFiles(): Promise<Record<string, number>> {
  const files: Record<string, number> = {};
  for (const entry of await readdir(path.join(copy, 'dist'), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    files[path.relative(copy, file)] = (await stat(file)).mtimeMs;
  }
  return files;
}

/** Gives the admin help a new first line, `marker`, so a build of it can be told from the others. */
async function editHelp(marker: string): Promise<void> {
  const file = path.join(copy, 'src/cli/admin/help.ts');
  const text = await readFile(file, 'utf8');
  await writeFile(
    file,
    text.replace(/The operator's commands\.( build-\S+)?/, `The operator's commands. build-${marker}`),
  );
}

beforeAll(async () => {
  copy = await mkdtemp(path.join(tmpdir(), 'voice-build-'));
  for (const part of ['src', 'db', 'generated', 'scripts', 'package.json']) {
    await cp(path.join(ROOT, part), path.join(copy, part), { recursive: true });
  }
  await symlink(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));
}, 60_000);

afterAll(async () => {
  if (copy) await rm(copy, { recursive: true, force: true });
});

describe('npm run build', () => {
  it('writes nothing when the sources did not change', { timeout: 300_000 }, async () => {
    expect((await run('npm', ['run', '-s', 'build'])).code).toBe(0);
    const first = await distFiles();
    expect(Object.keys(first)).toContain(path.join('dist', 'src', 'main.js'));
    const again = await run('npm', ['run', '-s', 'build']);
    expect(again.code, again.stderr).toBe(0);
    expect(await distFiles()).toEqual(first);
  });

  it('lets commands run while others rebuild, each on a whole build', { timeout: 600_000 }, async () => {
    expect((await run('npm', ['run', '-s', 'build'])).code).toBe(0);
    for (let round = 1; round <= 3; round += 1) {
      await editHelp(`round-${round}`);
      // Four `npm run admin -- --help` at once: each builds (the sources just changed) and then runs.
      const runs = await Promise.all(
        Array.from({ length: 4 }, () => run('sh', ['scripts/run-built.sh', 'admin', '--help'])),
      );
      for (const result of runs) {
        expect(result.code, result.stderr).toBe(0);
        expect(result.stdout).toContain(`The operator's commands. build-round-${round}`);
      }
    }
  });
});
