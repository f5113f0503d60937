// Where the cluster of a DATA_DIR lives: in <DATA_DIR>/pg, or, when the service runs as root and the
// cluster user cannot enter DATA_DIR, in a directory of its own under the shared root, whose path is
// kept in <DATA_DIR>/pg-location so that later starts and the CLI find the same cluster.
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { canEnter, type ClusterUser } from './cluster-user.js';
import { sharedDir } from './shared-dir.js';

const NOTE = 'pg-location';

async function notedDir(dataDir: string): Promise<string | null> {
  try {
    return (await readFile(path.join(dataDir, NOTE), 'utf8')).trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`could not read ${path.join(dataDir, NOTE)}: ${(error as Error).message}`);
  }
}

/** Whether `dir` holds an initialised cluster. */
export async function isCluster(dir: string): Promise<boolean> {
  return stat(path.join(dir, 'PG_VERSION')).then(
    () => true,
    () => false,
  );
}

/** The directory of the cluster already made for `dataDir`, or null. Throws when its note cannot be read. */
export async function existingClusterDir(dataDir: string): Promise<string | null> {
  const dir = (await notedDir(dataDir)) ?? path.join(dataDir, 'pg');
  return (await isCluster(dir)) ? dir : null;
}

/**
 * The port the cluster in `dir` was started on, read from its postmaster.pid (fourth line), or null when
 * no server has it open (the file is absent or unreadable). The server may have died since: callers
 * check that it answers.
 */
export async function postmasterPort(dir: string): Promise<number | null> {
  try {
    const line = (await readFile(path.join(dir, 'postmaster.pid'), 'utf8')).split('\n')[3];
    const port = Number(line);
    return Number.isInteger(port) && port > 0 && port < 65536 ? port : null;
  } catch {
    return null;
  }
}

/**
 * The directory that holds, or is to hold, the cluster of `dataDir` (which must exist). When `user` (the
 * cluster user of a root process) cannot enter `dataDir` and no cluster is there yet, a new directory is
 * made under the shared root and noted in `dataDir`; `notice` gets one line saying where the data is
 * whenever it is outside `dataDir`. Throws a one-line error when the note cannot be read or written.
 */
export async function clusterDir(
  dataDir: string,
  user: ClusterUser | null,
  notice: (line: string) => void,
): Promise<string> {
  const note = path.join(dataDir, NOTE);
  const say = (dir: string) =>
    notice(
      `The embedded PostgreSQL keeps its data in ${dir}, outside DATA_DIR, which its OS user cannot enter (noted in ${note}).`,
    );
  const noted = await notedDir(dataDir);
  if (noted) {
    say(noted);
    return noted;
  }
  const inPlace = path.join(dataDir, 'pg');
  if (!user || (await isCluster(inPlace)) || (await canEnter(user, dataDir))) return inPlace;
  const dir = await mkdtemp(path.join(await sharedDir('clusters'), 'cluster-'));
  try {
    await writeFile(note, `${dir}\n`);
  } catch (error) {
    throw new Error(`could not write ${note}: ${(error as Error).message}`);
  }
  say(dir);
  return dir;
}
