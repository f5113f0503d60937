// The folder where webhook:listen keeps what must survive a restart (its CA, its certificate, the
// endpoint it registered): private to the user, every file written whole or not at all.
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The folder to use: WEBHOOK_LISTEN_DIR, else $XDG_CONFIG_HOME/voice-call-api/listen, else ~/.config/voice-call-api/listen. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WEBHOOK_LISTEN_DIR) return path.resolve(env.WEBHOOK_LISTEN_DIR);
  const configHome = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(configHome, 'voice-call-api', 'listen');
}

/** A state folder that is not safe to keep secrets in. */
export class UnsafeStateDirError extends Error {}

/**
 * Creates `dir` (and any missing parent) private to the user (0700) when it does not exist. A folder
 * that exists keeps its mode: it is used only when it belongs to this user and no one else may write
 * in it (others could otherwise swap the files written there); any other is refused with
 * UnsafeStateDirError saying why. Rejects when the folder cannot be created or read.
 */
export async function openStateDir(dir: string): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode: 0o700 });
  if (created !== undefined) {
    // mkdir's mode is reduced by the umask; the folder this call made is set exactly.
    await chmod(dir, 0o700);
    return;
  }
  const info = await stat(dir);
  const problem = !info.isDirectory()
    ? 'is not a folder'
    : typeof process.getuid === 'function' && info.uid !== process.getuid()
      ? 'belongs to another user'
      : process.platform !== 'win32' && (info.mode & 0o022) !== 0
        ? `can be written by other users (mode ${(info.mode & 0o7777).toString(8)})`
        : null;
  if (problem) {
    throw new UnsafeStateDirError(
      `the state folder ${dir} ${problem}; webhook:listen keeps its private key and signing secret there: ` +
        'give --config-dir a folder of your own that others cannot write to, or a new path it will create',
    );
  }
}

/**
 * Writes `text` to `file` through a temporary file and a rename, so a crash never leaves half a file;
 * `mode` defaults to 0600 (readable by the owner only). Rejects when the folder is not writable.
 */
export async function writeStateFile(file: string, text: string, mode = 0o600): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode });
  await chmod(temporary, mode);
  await rename(temporary, file);
}

/** The text of `file`, or undefined when it does not exist; rejects on any other read error. */
export async function readStateFile(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Removes `file` if it exists. */
export async function removeStateFile(file: string): Promise<void> {
  await rm(file, { force: true });
}
