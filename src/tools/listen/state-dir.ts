// The folder where webhook:listen keeps what must survive a restart (its CA, its certificate, the
// endpoint it registered): private to the user, every file written whole or not at all.
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/** The folder to use: WEBHOOK_LISTEN_DIR, else $XDG_CONFIG_HOME/voice-call-api/listen, else ~/.config/voice-call-api/listen. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WEBHOOK_LISTEN_DIR) return path.resolve(env.WEBHOOK_LISTEN_DIR);
  const configHome = env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config');
  return path.join(configHome, 'voice-call-api', 'listen');
}

/** Creates `dir` when missing and makes it private (0700); rejects when it cannot. */
export async function openStateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
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
