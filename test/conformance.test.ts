// The conformance check (scripts/conformance) against the real app: a fixed seed, a bounded number of
// cases, and zero violations. Under `npm run test:prism` its traffic also passes through Prism.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { runConformance } from '../scripts/conformance/runner.js';
import { formatReport } from '../scripts/conformance/report.js';

const SEED = 20261121;
const CASES = 12;

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  // Calls step once a second, as in production, so a freshly placed call can still be canceled.
  // Webhook URLs point at a closed loopback port: deliveries fail at once and never leave the machine.
  app = await startTestApp(database, { config: { simulatorStepMs: 1_000, webhookPrivateAllowlist: ['127.0.0.0/8'] } });
  org = await createTestOrg(database.db, { planId: 'scale', credits: 1_000_000_000 });
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
});

it('finds no violation of the published spec', { timeout: 120_000 }, async () => {
  const report = await runConformance({
    baseUrl: app.apiUrl,
    apiKey: org.key,
    seed: SEED,
    cases: CASES,
    agentId: org.agentId,
    webhookUrl: 'https://127.0.0.1:5/conformance-hook',
    fetch: app.fetch,
  });
  const operations = report.tallies.filter((tally) => !tally.operation.id.startsWith('('));
  expect(operations.length).toBeGreaterThanOrEqual(15);
  for (const tally of operations)
    expect(tally.cases.valid, `${tally.operation.id} ran no valid case`).toBeGreaterThan(0);
  expect(report.violations, formatReport(report)).toEqual([]);
});
