// The campaign dispatcher across worker processes (the built service, `serve --role worker`): two
// workers never have more than max_concurrency of a campaign's calls in progress (sampled all along),
// and when the one dispatching is killed with SIGKILL mid-campaign, the other takes over and every
// (contact, attempt) is dialed at most once, every contact ends, and campaign.finished is sent once.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestOrg, startTestApp, type TestApp, type TestOrg } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import {
  campaignCalls,
  campaignCallsInProgress,
  createCampaign,
  createContacts,
  fetchCampaign,
  finishedEvents,
} from './support/campaigns.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import {
  killServerProcesses,
  serverEnvironment,
  startServerProcess,
  type ServerProcess,
} from './support/server-process.js';

let database: TestDatabase;
let app: TestApp;
let org: TestOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  // This process only serves the API; the worker processes dispatch.
  app = await startTestApp(database, { workers: false });
  org = await createTestOrg(database.db, { planId: 'scale', credits: 10_000_000 });
});

afterAll(async () => {
  killServerProcesses();
  await app?.close();
  await database?.drop();
});

/** A worker process on the test database: quick simulated calls and a frequent sweep. */
async function startWorker(): Promise<ServerProcess> {
  const env = await serverEnvironment(database.url, {
    SIMULATOR_STEP_MS: '40',
    JOB_POLL_INTERVAL_MS: '500',
    CAMPAIGN_SWEEP_INTERVAL_MS: '1000',
    LOG_LEVEL: 'warn',
  });
  return startServerProcess(env, 60_000, ['--role', 'worker']);
}

/** Samples the campaign's calls in progress until `until` settles; returns the largest count seen. */
async function sampleInProgress(campaignId: string, until: Promise<unknown>): Promise<number> {
  let done = false;
  void until.finally(() => (done = true));
  let most = 0;
  while (!done) {
    most = Math.max(most, await campaignCallsInProgress(database.db, campaignId));
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return most;
}

/** Creates a campaign of `count` contacts that always completes, dialing at most `concurrency` at once. */
async function campaignOf(count: number, concurrency: number, prefix: string) {
  const client = app.client(org.key);
  const numbers = Array.from({ length: count }, (_, i) => testNumber(`${prefix}${String(i).padStart(2, '0')}`));
  const contacts = await createContacts(client, numbers);
  return createCampaign(client, {
    agent_id: org.agentId,
    contacts: { contact_ids: contacts },
    max_concurrency: concurrency,
  });
}

/** Waits until the campaign has finished (read from the database, not to spend the API's rate) and returns it. */
async function finished(campaignId: string, timeoutMs: number) {
  await waitFor(
    'the campaign to finish',
    async () => {
      const { rows } = await sql<{ finished: boolean }>`
        SELECT finished_at IS NOT NULL AS finished FROM campaigns WHERE id = ${campaignId}`.execute(database.db);
      return rows[0]!.finished;
    },
    timeoutMs,
  );
  return fetchCampaign(app.client(org.key), campaignId);
}

/** Each (contact, attempt) with its number of calls. */
async function callsPerAttempt(campaignId: string): Promise<number[]> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM calls WHERE campaign_id = ${campaignId}
    GROUP BY campaign_contact_id, campaign_attempt`.execute(database.db);
  return rows.map((row) => row.n);
}

describe('two worker processes', () => {
  it('never exceed max_concurrency, sampled while the campaign runs', async () => {
    const workers = [await startWorker(), await startWorker()];
    const campaign = await campaignOf(40, 3, '31');
    const done = finished(campaign.id, 90_000);
    const most = await sampleInProgress(campaign.id, done);
    const read = await done;
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThanOrEqual(2);
    expect(read).toMatchObject({ status: 'completed', counters: { completed: 40, calls_placed: 40 } });
    expect(await callsPerAttempt(campaign.id)).toEqual(Array(40).fill(1));
    await Promise.all(workers.map((worker) => worker.stop('SIGTERM')));
  }, 120_000);

  it('dial each attempt at most once when the dispatching worker is killed with SIGKILL', async () => {
    const first = await startWorker();
    const campaign = await campaignOf(60, 5, '32');
    // The first worker alone dispatches until a part of the list has been called.
    await waitFor(
      'calls to be placed',
      async () => (await campaignCalls(database.db, campaign.id)).length >= 12,
      60_000,
    );
    const second = await startWorker();
    await first.stop('SIGKILL');
    const read = await finished(campaign.id, 150_000);
    expect(read).toMatchObject({ status: 'completed', counters: { completed: 60, in_progress: 0, pending: 0 } });
    const perAttempt = await callsPerAttempt(campaign.id);
    expect(perAttempt.every((n) => n === 1)).toBe(true);
    expect(perAttempt.length).toBe(60);
    expect(await finishedEvents(app.client(org.key), campaign.id)).toHaveLength(1);
    await second.stop('SIGTERM');
  }, 200_000);
});
