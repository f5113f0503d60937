// `npm run test:prism`: the contract-facing test files again, each API request and answer passing
// through Prism's validating proxy (test/support/prism-process.ts). Only files whose subject is the
// API's answers to integrators are listed: the dashboard, CLI, process and fault tests send no
// request Prism could judge, and running them twice only costs CI time.
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// The test files run through Prism, by name under test/.
const contractFacingFiles = [
  'agents',
  'bad-input',
  'calls-cancel',
  'calls-create',
  'calls-idempotency',
  'calls-lifecycle',
  'calls-list',
  'contacts',
  'contract-edges',
  'contract-statuses',
  'cursor-paging',
  'edges',
  'events',
  'foundation',
  'isolation',
  'rate-limit',
  'routing',
  'webhooks-api',
  'webhooks-delivery',
  'webhooks-isolation',
  'webhooks-retry',
];

export default defineConfig({
  test: {
    ...base.test,
    include: contractFacingFiles.map((name) => `test/${name}.test.ts`),
    // One file at a time: Prism is one process on the path of every request, so files run beside each
    // other only queue behind it, and a file that needs requests close together (the rate limiter's
    // quarter-second reservations) then fails on time alone.
    maxWorkers: 1,
  },
});
