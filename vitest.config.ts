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
    // Generous bounds: several files share two cores, some of them starting processes. A bound only
    // costs time when something is broken.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    expect: { poll: { timeout: 15_000 } },
  },
});
