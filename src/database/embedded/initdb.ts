// Makes a new cluster with initdb, run as the cluster user. The superuser password reaches initdb through
// a file in a private directory (mode 700, the cluster user's) that is removed as soon as initdb is done.
import { spawn } from 'node:child_process';
import { chown, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { PostgresBinaries } from './binaries.js';
import { runAs, type ClusterUser } from './cluster-user.js';
import { failureLine } from './failure-line.js';

function run(
  program: string,
  args: string[],
  user: ClusterUser | null,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { ...runAs(user), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`could not run ${program} (${error.code})`)),
    );
    child.once('close', (code) => resolve({ code, output }));
  });
}

/**
 * Initialises a cluster in `dir` (created if missing, owned by `user` when given) whose superuser
 * `postgres` has `password`: UTF-8, the built-in C.UTF-8 locale (the same on every machine), password
 * (SCRAM) authentication. Throws a one-line error with initdb's reason when it fails.
 */
export async function initCluster(options: {
  binaries: PostgresBinaries;
  dir: string;
  password: string;
  user: ClusterUser | null;
}): Promise<void> {
  const { binaries, dir, password, user } = options;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (user) await chown(dir, user.uid, user.gid);
  // Next to the cluster, where the cluster user can reach (unlike a private TMPDIR).
  const secrets = await mkdtemp(path.join(path.dirname(dir), '.pg-init-'));
  try {
    const passwordFile = path.join(secrets, 'password');
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600, flag: 'wx' });
    if (user) {
      await chown(passwordFile, user.uid, user.gid);
      await chown(secrets, user.uid, user.gid);
    }
    const { code, output } = await run(
      binaries.initdb,
      [
        `--pgdata=${dir}`,
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        '--auth=scram-sha-256',
        '--encoding=UTF8',
        '--locale=C',
        '--locale-provider=builtin',
        '--builtin-locale=C.UTF-8',
      ],
      user,
    );
    if (code !== 0) throw new Error(`initdb could not make a cluster in ${dir}: ${failureLine(output)}`);
  } finally {
    await rm(secrets, { recursive: true, force: true });
  }
}
