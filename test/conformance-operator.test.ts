// `npm run conformance -- --base-url URL` with no other flag, with test keys, against the built service
// started as an operator starts it (`node dist/src/main.js serve`, no test settings): no violation, nothing fetched
// from outside the machine, and notes that are true. Then the server is restarted with the settings
// the note names, and the webhook cases it said were skipped run and pass.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { freePort } from './support/own-postgres.js';
import type { TestOrg } from './support/app.js';
import { refusedOrgKeys, roomyOrg } from './support/refused-orgs.js';
import { killStarted, startService, stopService } from './support/service-process.js';

let database: TestDatabase;
let org: TestOrg;
let listenDir: string;

/** The built service on a free port with only what an operator sets, plus `extra`. */
async function serve(extra: Record<string, string>) {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: database.url, PORT: String(port), LOG_LEVEL: 'info' };
  for (const name of ['TEST_DATABASE_URL', 'WEBHOOK_PRIVATE_ALLOWLIST', 'NODE_EXTRA_CA_CERTS', 'VALIDATE_RESPONSES']) {
    delete env[name];
  }
  // The body timeout below the request deadline, so a stalled body gets its documented 408 (with the
  // defaults, both 10 s, the deadline's 503 answers first).
  const { child } = await startService(
    { ...env, BODY_TIMEOUT_MS: '4000', ...extra },
    { command: [process.execPath, 'dist/src/main.js', 'serve'] },
  );
  return { child, baseUrl: `http://127.0.0.1:${port}/api/v1` };
}

/** `npm run conformance -- --base-url URL`, the key (and `extra` variables) in the environment; resolves with its exit code and output. */
function conformance(
  baseUrl: string,
  extra: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { ...process.env, VOICE_CALL_API_KEY: org.key, WEBHOOK_LISTEN_DIR: listenDir, ...extra };
  return new Promise((resolve) => {
    execFile(
      'npm',
      ['run', '--silent', 'conformance', '--', '--base-url', baseUrl],
      { env, timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr }),
    );
  });
}

/** The lines under "Notes:" in a report. */
function notes(report: string): string[] {
  const after = report.split('\nNotes:\n')[1] ?? '';
  return after.split('\n\n')[0]!.split('\n').filter(Boolean);
}

beforeAll(async () => {
  database = await createTestDatabase();
  org = await roomyOrg(database.db);
  listenDir = await mkdtemp(path.join(tmpdir(), 'conformance-listen-'));
}, 120_000);

afterAll(async () => {
  killStarted();
  await database?.drop();
  await rm(listenDir, { recursive: true, force: true });
});

it('finds no violation of a server started as an operator does, and says which cases it skipped and why', async () => {
  const server = await serve({});
  try {
    const run = await conformance(server.baseUrl);
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/, 0 violations \(seed \d+\)/);
    expect(run.stdout).not.toContain('example.com');
    const caFile = path.join(listenDir, 'ca.pem');
    const [runNote, ...operationNotes] = notes(run.stdout);
    // The production server refuses loopback webhook URLs: said once, with exactly what enables them.
    expect(runNote).toContain(`the server refuses the check's loopback receiver https://127.0.0.1:`);
    expect(runNote).toContain(`WEBHOOK_PRIVATE_ALLOWLIST=127.0.0.0/8 NODE_EXTRA_CA_CERTS=${caFile}`);
    expect(runNote).toContain('--webhook-url');
    // Every other note is about a webhook success path that needs an endpoint, or a refusal that needs
    // an org the operator makes (named by its variable); the org's agent placed calls.
    expect(operationNotes.length).toBeGreaterThan(0);
    for (const note of operationNotes)
      expect(note).toMatch(
        /^ {2}(\w*Webhook\w*: .*no webhook endpoint could be made|createCall: 40[23] .*not checked.*VOICE_CALL_NO_(CREDITS|PLAN)_API_KEY|listAgents: 429 not checked: pass VOICE_CALL_SMALL_PLAN_API_KEY .* or --exercise-rate-limit)/,
      );
  } finally {
    await stopService(server.child);
  }
}, 400_000);

it('runs the webhook cases once the server has the settings the note names', async () => {
  const server = await serve({
    WEBHOOK_PRIVATE_ALLOWLIST: '127.0.0.0/8',
    NODE_EXTRA_CA_CERTS: path.join(listenDir, 'ca.pem'),
    // Not ones the note names, for time only: the simulated calls step four times a second instead of
    // once, so the awaited call.completed comes in seconds rather than a minute, and the check's
    // requests with bad keys are not throttled (60 a minute would have it wait out a 429 a second).
    SIMULATOR_STEP_MS: '250',
    AUTH_FAILURES_PER_MINUTE: '100000',
  });
  try {
    const keys = await refusedOrgKeys(database.db);
    const run = await conformance(server.baseUrl, {
      VOICE_CALL_SMALL_PLAN_API_KEY: keys.smallPlanKey,
      VOICE_CALL_NO_CREDITS_API_KEY: keys.noCreditsKey,
      VOICE_CALL_NO_PLAN_API_KEY: keys.noPlanKey,
      VOICE_CALL_LOW_BALANCE_API_KEY: keys.lowBalanceKey,
    });
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/, 0 violations \(seed \d+\)/);
    expect(notes(run.stdout)).toEqual([]);
    // The balance.low of the org a call took below its threshold arrived and was judged; the endpoint
    // made with that org's key was deleted with it.
    expect(run.stdout).toMatch(/^\(event balance\.low\) +POST balance\.low +0 +0 +[1-9]\d* +0$/m);
    const left = await database.db
      .selectFrom('webhooks')
      .select('id')
      .where('url', 'like', '%/low-balance')
      .where('deleted_at', 'is', null)
      .execute();
    expect(left).toEqual([]);
  } finally {
    await stopService(server.child);
  }
}, 400_000);
