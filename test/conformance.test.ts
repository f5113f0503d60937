// The conformance check (src/conformance) against the real app: a fixed seed, a bounded number of
// cases, and zero violations. Its own loopback receiver gets the webhook deliveries (the app trusts the
// receiver's CA). Under `npm run test:prism` its traffic also passes through Prism.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openStateDir } from '../src/tools/listen/state-dir.js';
import { loadOrMakeTls } from '../src/tools/listen/stored-tls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { refusedOrgKeys, roomyOrg } from './support/refused-orgs.js';
import { runConformance } from '../src/conformance/runner.js';
import { formatReport } from '../src/conformance/report.js';

const SEED = 20261121;
const CASES = 12;

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;
let receiverDir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  receiverDir = await mkdtemp(path.join(tmpdir(), 'conformance-receiver-'));
  await openStateDir(receiverDir);
  const { caFile } = await loadOrMakeTls(receiverDir, '127.0.0.1');
  // A simulated second is 250 ms: a freshly placed call still lives seconds (so it can be canceled),
  // and the awaited call.completed comes within about 15 s instead of a minute.
  app = await startTestApp(database, {
    config: {
      simulatorStepMs: 250,
      webhookPrivateAllowlist: ['127.0.0.0/8'],
      // Shorter than the request deadline, so a stalled body gets its 408 (with equal defaults the 503 wins).
      bodyTimeoutMs: 2_000,
      webhookCaCerts: [await readFile(caFile, 'utf8')],
    },
  });
  org = await roomyOrg(database.db);
});

afterAll(async () => {
  await app?.close();
  await database?.drop();
  await rm(receiverDir, { recursive: true, force: true });
});

it('finds no violation of the published spec', { timeout: 240_000 }, async () => {
  const report = await runConformance({
    baseUrl: app.apiUrl,
    apiKey: org.key,
    seed: SEED,
    cases: CASES,
    agentId: org.agentId,
    receiverDir,
    fetch: app.fetch,
    ...(await refusedOrgKeys(database.db)),
  });
  const operations = report.tallies.filter((tally) => !tally.operation.id.startsWith('('));
  expect(operations.length).toBeGreaterThanOrEqual(15);
  for (const tally of operations)
    expect(tally.cases.valid, `${tally.operation.id} ran no valid case`).toBeGreaterThan(0);
  expect(report.violations, formatReport(report)).toEqual([]);
  // Every webhook case ran: nothing was skipped for want of an endpoint or a trusted receiver.
  expect(report.notes).toEqual([]);
  expect(report.tallies.find((tally) => tally.operation.id === 'testWebhook')?.notes).toEqual([]);
  // The refusals ran: a small plan exhausted, orgs without credits or a plan, an unknown encoding, a stalled body.
  const statuses = (id: string) => [...(report.tallies.find((tally) => tally.operation.id === id)?.statuses ?? [])];
  expect(statuses('listAgents')).toContain(429);
  expect(statuses('createCall')).toEqual(expect.arrayContaining([402, 403, 408, 415]));
  expect(statuses('upsertContact')).toContain(415);
  // Every event kind was delivered to the receiver and judged (a call canceled at once may end completed instead).
  for (const kind of [
    'webhook.test',
    'contact.created',
    'call.completed',
    'call.failed',
    'call.no_answer',
    'call.busy',
  ])
    expect(
      report.tallies.find((tally) => tally.operation.id === `(event ${kind})`)?.cases.scenario,
      kind,
    ).toBeGreaterThan(0);
});

it('prints its usage for --help and exits 0', async () => {
  const result = await new Promise<{ code: number; stdout: string }>((resolve) => {
    execFile(
      process.execPath,
      ['dist/src/main.js', 'conformance', '--help'],
      { env: { ...process.env, VOICE_CALL_API_KEY: '' } },
      (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout }),
    );
  });
  expect(result.code).toBe(0);
  expect(result.stdout).toContain('--base-url');
  expect(result.stdout).toContain('Exit status');
});
