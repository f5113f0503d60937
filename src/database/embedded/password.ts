// The embedded cluster's superuser password: random per cluster, kept in <DATA_DIR>/pg-password, which
// only its owner (the user the service runs as) may read.
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The password of clusters made before passwords were stored: they keep it. */
export const LEGACY_PASSWORD = 'postgres';

const FILE = 'pg-password';

/** The password stored under `dataDir`, or null when there is none. Throws when the file cannot be read. */
export async function storedPassword(dataDir: string): Promise<string | null> {
  const file = path.join(dataDir, FILE);
  try {
    return (await readFile(file, 'utf8')).trim() || null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(
      `could not read the embedded PostgreSQL password in ${file} (${(error as NodeJS.ErrnoException).code}); ` +
        'run as the user that started the service first',
    );
  }
}

/** Makes a new random password and stores it under `dataDir` (mode 600, replacing any). Throws when it cannot be written. */
export async function createPassword(dataDir: string): Promise<string> {
  const password = randomBytes(24).toString('base64url');
  const file = path.join(dataDir, FILE);
  const partial = `${file}.${process.pid}`;
  try {
    await writeFile(partial, `${password}\n`, { mode: 0o600, flag: 'wx' });
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    throw new Error(`could not store the embedded PostgreSQL password in ${file}: ${(error as Error).message}`);
  }
  return password;
}
