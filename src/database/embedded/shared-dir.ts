// A place of the service's own, outside anyone's home, for what the cluster user must reach when the
// service runs as root: directories owned by root, mode 755 (anyone may enter, only root may write).
import { chmod, lstat, mkdir } from 'node:fs/promises';
import path from 'node:path';

/** The root of that place. */
export const SHARED_ROOT = '/var/lib/voice-call-api';

/**
 * The directory `SHARED_ROOT/<parts...>`, created as needed; each level is checked to be a real directory
 * owned by root and set to mode 755. Throws a one-line error when one cannot be made or is not root's.
 */
export async function sharedDir(...parts: string[]): Promise<string> {
  let dir = SHARED_ROOT;
  for (const part of ['', ...parts]) {
    dir = path.join(dir, part);
    try {
      await mkdir(dir, { recursive: true, mode: 0o755 });
      const stat = await lstat(dir);
      if (!stat.isDirectory() || stat.uid !== 0) {
        throw new Error('it is not a directory owned by root; remove it so that it is made again');
      }
      if ((stat.mode & 0o7777) !== 0o755) await chmod(dir, 0o755);
    } catch (error) {
      throw new Error(`could not prepare ${dir} for the embedded PostgreSQL: ${(error as Error).message}`);
    }
  }
  return dir;
}
