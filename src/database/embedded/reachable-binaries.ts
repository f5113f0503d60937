// Makes the PostgreSQL programs runnable by the cluster user: where the package is installed when the
// user can run them there, else from a copy made once per package version in the shared directory.
import { chmod, cp, lstat, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { binariesIn, type PostgresBinaries } from './binaries.js';
import { succeedsAs, type ClusterUser } from './cluster-user.js';
import { sharedDir } from './shared-dir.js';

function runs(user: ClusterUser, binaries: PostgresBinaries): Promise<boolean> {
  return succeedsAs(user, binaries.postgres, ['--version']);
}

/** Lets anyone read everything under `dir` (run its programs, enter its folders); only the owner may write. */
async function shareReadOnly(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { recursive: true })) {
    const file = path.join(dir, entry);
    const info = await lstat(file);
    if (info.isSymbolicLink()) continue;
    const mode = info.isDirectory() || info.mode & 0o111 ? 0o755 : 0o644;
    if ((info.mode & 0o7777) !== mode) await chmod(file, mode);
  }
}

/** Copies the package's tree to `target`, atomically: a half-made copy is never found there. */
async function copyTree(binaries: PostgresBinaries, target: string): Promise<void> {
  const partial = await mkdtemp(`${target}.partial-`);
  try {
    await cp(binaries.root, partial, { recursive: true, verbatimSymlinks: true });
    await shareReadOnly(partial);
    await rename(partial, target).catch((error: NodeJS.ErrnoException) => {
      // Another process made the same copy first.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
    });
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/**
 * The binaries `user` runs (the package's own when `user` is null, i.e. not root), copying the package's
 * tree to `<shared>/binaries/<id>` when `user` cannot run them where they are; `notice` gets one line when
 * a copy is made. Throws a one-line error when the copy fails or still cannot be run.
 */
export async function reachableBinaries(
  user: ClusterUser | null,
  binaries: PostgresBinaries,
  notice: (line: string) => void,
): Promise<PostgresBinaries> {
  if (!user || (await runs(user, binaries))) return binaries;
  const target = path.join(await sharedDir('binaries'), binaries.id);
  if (!(await exists(target))) {
    try {
      await copyTree(binaries, target);
    } catch (error) {
      throw new Error(`could not copy the PostgreSQL binaries to ${target}: ${(error as Error).message}`);
    }
    notice(`Copied the PostgreSQL binaries to ${target}: user ${user.name} cannot reach ${binaries.root}.`);
  }
  const copy = binariesIn(binaries, target);
  if (!(await runs(user, copy))) {
    throw new Error(
      `user ${user.name} cannot run ${copy.postgres} either; check that ${target} is complete (delete it to copy again) ` +
        'and that its file system allows running programs, or set DATABASE_URL',
    );
  }
  return copy;
}
