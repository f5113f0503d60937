// Paths of the project's own non-code files (the spec, the generated artifacts), the same whether the
// service runs from src/ through tsx or from its build in dist/src/.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findProjectRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'package.json')) && existsSync(path.join(dir, 'generated'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no project root (package.json next to generated/) above ${from}`);
  }
}

/** The folder holding package.json, spec/ and generated/; throws at load when there is none. */
export const PROJECT_ROOT = findProjectRoot(path.dirname(fileURLToPath(import.meta.url)));

/** The absolute path of a file given relative to the project root (e.g. `generated/openapi.json`). */
export function projectFile(relativePath: string): string {
  return path.join(PROJECT_ROOT, relativePath);
}
