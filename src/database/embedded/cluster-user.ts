// Who runs the embedded cluster: the process's own user, or, when the process is root (which initdb and
// postgres refuse), the unprivileged OS user `postgres`, created when missing.
import { execFile, spawn, type SpawnOptions } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The OS user the cluster's programs run as when the service runs as root. */
export interface ClusterUser {
  name: string;
  uid: number;
  gid: number;
}

const NAME = 'postgres';

async function lookUp(name: string): Promise<ClusterUser | null> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', name]), run('id', ['-g', name])]);
    return { name, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return null;
  }
}

function firstLine(error: unknown): string {
  const stderr = (error as { stderr?: string }).stderr?.trim();
  return (stderr || (error instanceof Error ? error.message : String(error))).split('\n')[0]!;
}

/**
 * The user to run the cluster as: null when the process is not root (the cluster runs as the process's
 * own user), else `postgres`, made a system user (no login, no home) if it does not exist. Throws a
 * one-line error when that user cannot be created.
 */
export async function clusterUser(): Promise<ClusterUser | null> {
  if (process.getuid?.() !== 0) return null;
  const found = await lookUp(NAME);
  if (found) return found;
  try {
    const groupExists = await run('getent', ['group', NAME]).then(
      () => true,
      () => false,
    );
    if (!groupExists) await run('groupadd', ['--system', NAME]);
    await run('useradd', [
      '--system',
      '--gid',
      NAME,
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      NAME,
    ]);
  } catch (error) {
    throw new Error(
      `could not create the OS user "${NAME}" that runs the embedded PostgreSQL when the service runs as root ` +
        `(${firstLine(error)}); create that user, run the service as an unprivileged user, or set DATABASE_URL`,
    );
  }
  const created = await lookUp(NAME);
  if (!created) throw new Error(`the OS user "${NAME}" was created but cannot be found; check /etc/passwd`);
  return created;
}

/**
 * Options that make a spawned program run as `user` (as this process's user when null), from `/` (which
 * any user may enter), with messages in English (the C locale).
 */
export function runAs(user: ClusterUser | null): SpawnOptions {
  return { ...(user ? { uid: user.uid, gid: user.gid } : {}), cwd: '/', env: { ...process.env, LC_ALL: 'C' } };
}

/** Whether `command args` exits 0 when run as `user` (so modes, ACLs and mount options all count). Never throws. */
export function succeedsAs(user: ClusterUser, command: string, args: string[]): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...runAs(user), stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });
}

/** Whether `user` can enter the directory `dir` (search permission on it and every directory above). */
export function canEnter(user: ClusterUser, dir: string): Promise<boolean> {
  return succeedsAs(user, '/bin/sh', ['-c', 'test -x "$1"', 'sh', dir]);
}
