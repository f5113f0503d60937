import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    // Three files at a time: vitest's default on two cores is one, and most files spend their time
    // waiting on PostgreSQL, child processes and receivers rather than on the CPU. VITEST_MAX_WORKERS
    // overrides it.
    maxWorkers: 3,
    // A worker runs file after file keeping the modules it loaded, instead of a new process and a fresh
    // module graph per file, which saves CPU on a suite that is CPU-bound (CONTRIBUTING has the
    // figures). So no module may keep state that ties it to one app (src/http/request-checks.ts keys
    // what it derives by the operation object for that reason), and each file's afterAll stops what it
    // started. `--isolate` runs each file in its own process again, to tell a leak between files from
    // a bug.
    isolate: false,
    // Generous bounds: several files share two cores, some of them starting processes. A bound only
    // costs time when something is broken.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    expect: { poll: { timeout: 15_000 } },
  },
});
