// `npm run build`: transpiles src/, db/ and generated/events.ts into dist/ with esbuild, only when they
// changed, and so that no process ever reads a half-written build. Each build goes to its own folder,
// dist/builds/<hash of the sources>/, written under a temporary name and renamed when complete; then
// dist/src/main.js, a one-line entry that imports that build's main, is replaced by a rename. A process
// that started earlier keeps importing from its own build's folder for KEEP_OLD_BUILDS_MS after a newer
// build replaced it (a child that `serve --processes` restarts starts from the entry, so on the newer
// build), and two builds at once of the same sources make the same folder (the second rename finds it
// there and drops its copy). Run with Node's own TypeScript support: `node scripts/build.ts`.
import { createHash } from 'node:crypto';
import { glob, mkdir, readFile, readdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { build, version } from 'esbuild';

/** The sources of the build, relative to the project root. */
const SOURCES = ['src/**/*.ts', 'db/**/*.ts', 'generated/events.ts'];

/** How esbuild transpiles them: one ES module per source file, for Node 24. */
const OPTIONS = { format: 'esm', platform: 'node', target: 'node24', logLevel: 'warning' } as const;

const ROOT = path.resolve(import.meta.dirname, '..');
const DIST = path.join(ROOT, 'dist');
const BUILDS = path.join(DIST, 'builds');
const ENTRY = path.join(DIST, 'src', 'main.js');

/** How long a replaced build stays (a process started on it may still import from it); its folder's time says when it was replaced. */
const KEEP_OLD_BUILDS_MS = 24 * 3_600_000;

/** The source files, sorted. */
async function sourceFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const pattern of SOURCES) for await (const file of glob(pattern, { cwd: ROOT })) files.push(file);
  return files.sort();
}

/** A hash of everything the build's output depends on: each source's path and text, esbuild's version and options, this script. */
async function sourceHash(files: string[]): Promise<string> {
  const hash = createHash('sha256').update(JSON.stringify({ version, OPTIONS }));
  hash.update(await readFile(import.meta.filename));
  for (const file of files) hash.update(`\0${file}\0`).update(await readFile(path.join(ROOT, file)));
  return hash.digest('hex').slice(0, 16);
}

/** The entry module: imports the build `id`'s main, which runs the command. */
function entryText(id: string): string {
  return `#!/usr/bin/env node\n// Written by scripts/build.ts: runs build ${id}.\nimport '../builds/${id}/src/main.js';\n`;
}

/** Writes `text` to `file` through a temporary file and a rename, so a reader sees the old or the new file whole. */
async function replaceFile(file: string, text: string): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, text, { mode: 0o755 });
  await rename(temporary, file);
}

/** Makes dist/builds/<id> from `files`, unless a build of the same sources is already there. */
async function buildOnce(id: string, files: string[]): Promise<void> {
  const target = path.join(BUILDS, id);
  if (await exists(target)) return;
  const temporary = path.join(BUILDS, `.${id}.${process.pid}.tmp`);
  await rm(temporary, { recursive: true, force: true });
  await build({
    ...OPTIONS,
    entryPoints: files.map((file) => path.join(ROOT, file)),
    outdir: temporary,
    outbase: ROOT,
  });
  try {
    await rename(temporary, target);
  } catch (error) {
    // Another build of the same sources finished first: its folder is the same as ours.
    if (!['ENOTEMPTY', 'EEXIST'].includes(String((error as NodeJS.ErrnoException).code))) throw error;
    await rm(temporary, { recursive: true, force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Removes the builds (and left-over temporary folders) other than `current` replaced over KEEP_OLD_BUILDS_MS ago. */
async function removeOldBuilds(current: string): Promise<void> {
  const now = Date.now();
  for (const name of await readdir(BUILDS)) {
    if (name === current) continue;
    const folder = path.join(BUILDS, name);
    // Another build may rename or remove its temporary folder meanwhile.
    const modified = await stat(folder).then(
      (found) => found.mtimeMs,
      () => now,
    );
    if (now - modified > KEEP_OLD_BUILDS_MS) await rm(folder, { recursive: true, force: true });
  }
}

const files = await sourceFiles();
const id = await sourceHash(files);
await mkdir(BUILDS, { recursive: true });
await mkdir(path.dirname(ENTRY), { recursive: true });
await buildOnce(id, files);
const entry = entryText(id);
const previous = await readFile(ENTRY, 'utf8').catch(() => '');
if (previous !== entry) {
  await replaceFile(ENTRY, entry);
  // The replaced build's time starts now: the processes running it get their full KEEP_OLD_BUILDS_MS.
  const replaced = /builds\/([0-9a-f]+)\//.exec(previous)?.[1];
  // It may be gone already (removed by hand, or by another build meanwhile).
  if (replaced) await utimes(path.join(BUILDS, replaced), new Date(), new Date()).catch(() => undefined);
}
await removeOldBuilds(id);
