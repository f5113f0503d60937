// A reader that stops early (`migrate --status | head -1`) closes the CLI's stdout: the command keeps
// its own exit status, with no stack trace, instead of crashing on EPIPE (which would read as exit 1,
// "the database could not be reached").
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { MAIN } from './support/cli.js';

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
});

afterAll(async () => {
  await database?.drop();
});

it('keeps its exit status when stdout is closed after the first line', { timeout: 60_000 }, async () => {
  for (const [args, status] of [
    [['migrate', '--status'], 0],
    [['migrate', '--check'], 0],
    [['admin', '--help'], 0],
  ] as const) {
    const child = spawn(process.execPath, [MAIN, ...args], {
      env: { ...process.env, DATABASE_URL: database.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // The first chunk read, the pipe is closed, as `head -1` does.
    await once(child.stdout, 'data');
    child.stdout.destroy();
    const [code] = (await once(child, 'exit')) as [number | null];
    expect([code, stderr], args.join(' ')).toEqual([status, '']);
  }
});
