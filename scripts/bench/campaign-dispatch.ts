// The campaign dispatch phase (issue 42): one campaign over an org's 100,000 contacts, created through
// the API with `max_concurrency` 500 and windows open all week, dispatched by ONE worker process
// (`serve --role worker`) against the simulator, whose calls last about a second, beside a separate API
// process. For a bounded time it samples, back to back, how many of the campaign's calls are in progress
// (and how late the call-progress worker is with them) and the worker's resident memory, and measures
// another org's `GET /calls` at a fixed rate while the campaign dials; then it cancels the campaign and
// waits for it to finish. The same load with the worker idle is measured twice, before the campaign and
// after it has finished, each after a checkpoint, and pooled: on a shared virtual machine the idle
// latency drifts within minutes, and a baseline on both sides of the dispatch is not one moment's luck.
// Placements per second are read from the calls the campaign made (their placement times), overall and
// after the first seconds.
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Db } from '../../src/database/connect.js';
import { issueApiKey } from '../../src/orgs/api-keys.js';
import { pooledLoad, type LoadResult, type RequestSpec } from './load.js';
import { machineCpuTicks, postgresCpuMs, rssMiB, sampleRss, stealPercentSince, type Child } from './processes.js';
import { median, medianLoad, medianOf, repeat } from './repeat.js';

/** Contacts of the campaign's org, all in the campaign. */
export const CAMPAIGN_CONTACTS = 100_000;
/** The campaign's `max_concurrency`. */
export const CAMPAIGN_MAX_CONCURRENCY = 500;
/**
 * The simulator's second for this phase: a simulated call lasts 24 to 66 simulated seconds, 45 on
 * average, so about one second of wall-clock time.
 */
export const CAMPAIGN_SIMULATOR_STEP_MS = 22;
/** How long each run lets the campaign dial, by default. */
export const CAMPAIGN_SECONDS = 60;
/** Placements before this many seconds after creation are left out of the steady-state rate. */
export const STEADY_AFTER_SEC = 10;
/** The fixed rate and connections of the other org's `GET /calls` during the dispatch and at idle. */
export const LIST_RATE = 100;
const LIST_CONNECTIONS = 4;
/** The campaign's org, seeded on first use (and its plan, whose cap on calls in progress the dispatch meets). */
const ORG_NAME = `Bench campaign (${CAMPAIGN_CONTACTS.toLocaleString('en')} contacts)`;
const PLAN = { id: 'bench-campaign', maxConcurrentCalls: 1_000, rateLimitPerMinute: 10_000_000 };
/** The most a run waits, after canceling its campaign, for its calls to end and the campaign to finish. */
const DRAIN_TIMEOUT_MS = 60_000;
/** The pause between two samples of the calls in progress. */
const SAMPLE_PAUSE_MS = 25;
/** The statuses of a call that has not ended. */
const UNFINISHED = ['queued', 'dialing', 'ringing', 'in_progress'];

/** One run's numbers. */
export interface CampaignDispatchRun {
  /** Calls placed within the run's seconds after the campaign was created. */
  placed: number;
  /** Placements a second over the whole run, start included. */
  perSecond: number;
  /** Placements a second from STEADY_AFTER_SEC to the end. */
  steadyPerSecond: number;
  /** From creation to the first placement, in ms (the dispatch job's start). */
  firstPlacementMs: number;
  /** The most calls of the campaign in progress at one sample (calls not ended plus placements under way). */
  peakInProgress: number;
  /** The most contacts being called at one sample (claimed, placing, or with a call not yet settled). */
  peakCalling: number;
  /** Samples of the counts taken during the run. */
  samples: number;
  /** How late the call-progress worker was with the campaign's calls: the most overdue next step, ms. */
  peakProgressLagMs: number;
  /** The worker's resident memory after start and at its peak, in MiB. */
  workerIdleRssMiB: number;
  workerPeakRssMiB: number;
  /** The worker's and PostgreSQL's CPU shares of one core over the run, in percent. */
  workerCpuPercent: number;
  postgresCpuPercent: number;
  /** How long POST /campaigns took (it stores the campaign's 100,000 contacts), in ms. */
  createMs: number;
  /** The other org's GET /calls with the worker idle (before and after the campaign, pooled), and while the campaign dials. */
  listIdle: LoadResult;
  listDuring: LoadResult;
  /** The share of the machine's CPU time the hypervisor took (steal) during the idle loads and during the dispatch, in percent. */
  idleStealPercent: number;
  dispatchStealPercent: number;
  /** Seconds from the cancel to the campaign finished with no call in progress. */
  drainSeconds: number;
}

/** The phase's report: the median of the runs, and each run. */
export interface CampaignDispatchReport extends Omit<CampaignDispatchRun, 'listIdle' | 'listDuring'> {
  contacts: number;
  maxConcurrency: number;
  seconds: number;
  steadyAfterSec: number;
  simulatorStepMs: number;
  listRate: number;
  listIdle: LoadResult;
  listDuring: LoadResult;
  /** The runs' p99 during the dispatch over idle, and their median. */
  listP99Ratios: number[];
  listP99Ratio: number;
  runs: CampaignDispatchRun[];
}

/** What the phase needs from the benchmark session. */
export interface CampaignDispatchOptions {
  db: Db;
  /** Starts the API process (the campaign is created through it). */
  startApi: () => Promise<Child>;
  /** Starts one worker process with the phase's settings. */
  startWorker: () => Promise<Child>;
  /** The other org's GET /calls. */
  list: () => RequestSpec;
  /** A load run at a fixed rate against `server`. */
  load: (
    server: Child,
    next: () => RequestSpec,
    options: { seconds: number; rate: number; connections: number; latencies?: number[] },
  ) => Promise<LoadResult>;
  /** CPU time used so far by a process, in ms. */
  cpuMs: (pid: number) => number;
  seconds: number;
  listSeconds: number;
  repetitions: number;
  log: (message: string) => void;
}

/** The campaign org (seeded on first use: org, plan, agent, credits, contacts) and a fresh API key. */
async function prepareOrg(
  db: Db,
  log: (message: string) => void,
): Promise<{ orgId: string; agentId: string; key: string }> {
  let org = await db
    .selectFrom('orgs')
    .innerJoin('agents', 'agents.org_id', 'orgs.id')
    .select(['orgs.id as orgId', 'agents.id as agentId'])
    .where('orgs.name', '=', ORG_NAME)
    .executeTakeFirst();
  if (!org) {
    const started = performance.now();
    org = await db.transaction().execute(async (trx) => {
      await sql`
        INSERT INTO plans (id, name, rate_limit_per_minute, active, max_concurrent_calls)
        VALUES (${PLAN.id}, 'Benchmark campaigns', ${PLAN.rateLimitPerMinute}, true, ${PLAN.maxConcurrentCalls})
        ON CONFLICT (id) DO NOTHING`.execute(trx);
      const { rows } = await sql<{ orgId: string; agentId: string }>`
        WITH org AS (
          INSERT INTO orgs (name, plan_id, default_from_e164, balance_paise)
          VALUES (${ORG_NAME}, ${PLAN.id}, '+918045678901', 1000000000000)
          RETURNING id
        ), ledger AS (
          INSERT INTO credit_ledger (org_id, amount_paise, kind, note)
          SELECT id, 1000000000000, 'top_up', 'benchmark opening balance' FROM org
        )
        INSERT INTO agents (org_id, name, language, max_duration_sec, rate_paise_per_minute)
        SELECT id, 'Bench campaign agent', 'en-IN', 600, 200 FROM org
        RETURNING org_id AS "orgId", id AS "agentId"`.execute(trx);
      const made = rows[0]!;
      await sql`
        INSERT INTO contacts (org_id, phone_e164, name, consent_capture, created_at, updated_at)
        SELECT ${made.orgId}::uuid, '+9171' || lpad(i::text, 8, '0'), 'Contact ' || i,
          (ARRAY['pre_call', 'website_form', 'manual', 'imported'])[1 + i % 4], created, created
        FROM generate_series(1, ${CAMPAIGN_CONTACTS}) AS i,
          LATERAL (SELECT timestamptz '2026-11-01T00:00:00Z' - make_interval(secs => (${CAMPAIGN_CONTACTS} - i) * 60) AS created) AS t`.execute(
        trx,
      );
      return made;
    });
    await sql`VACUUM (ANALYZE) contacts, orgs, agents`.execute(db);
    log(
      `campaign dispatch: seeded ${CAMPAIGN_CONTACTS} contacts in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  }
  // Calls the earlier phases placed (their simulator's second lasts 10 minutes) come due during this
  // phase, and its worker, with a simulator of its own, would advance tens of thousands of them before
  // the campaign's: parked, never advanced, as the seed parks an earlier run's.
  await db
    .updateTable('calls')
    .set({ next_step_at: null })
    .where('next_step_at', 'is not', null)
    .where('org_id', '<>', org.orgId)
    .execute();
  await db.deleteFrom('api_keys').where('org_id', '=', org.orgId).execute();
  const { key } = await issueApiKey(db, org.orgId);
  return { ...org, key };
}

/** Sends an API request with the org's key; returns the parsed body, throwing on a non-2xx answer. */
async function api<T>(origin: string, key: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${origin}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

/**
 * The campaign's calls in progress, its contacts being called and the most overdue next step, sampled back
 * to back. The unfinished calls are read one status at a time down the (campaign, status) index (OFFSET 0
 * keeps PostgreSQL from merging the four walks into one over every call the campaign has made, which took
 * a third of a core by the end of a run). Bitmap scans are off for the sample: they never mark an index
 * entry dead, so each sample went through every earlier version of the campaign's calls and placements
 * again, where an index scan marks them once and skips them after.
 */
function sampleCampaign(db: Db, campaignId: string) {
  let stopped = false;
  const peak = { inProgress: 0, calling: 0, lagMs: 0, samples: 0 };
  const loop = (async () => {
    while (!stopped) {
      const { rows } = await db.transaction().execute(async (trx) => {
        await sql`SET LOCAL enable_bitmapscan = off`.execute(trx);
        return sql<{ in_progress: number; calling: number; lag_ms: number | null }>`
        SELECT
          progress.n + (SELECT count(*)::int FROM call_placements WHERE campaign_id = ${campaignId}) AS in_progress,
          (SELECT count(*)::int FROM campaign_contacts WHERE campaign_id = ${campaignId} AND state = 'calling') AS calling,
          extract(epoch FROM clock_timestamp() - progress.next_step_at) * 1000 AS lag_ms
        FROM (
          SELECT count(*)::int AS n, min(calls.next_step_at) AS next_step_at
          FROM unnest(${UNFINISHED}::text[]) AS unfinished (status)
          CROSS JOIN LATERAL (
            SELECT next_step_at FROM calls WHERE campaign_id = ${campaignId} AND status = unfinished.status OFFSET 0
          ) AS calls
        ) AS progress`.execute(trx);
      });
      const row = rows[0]!;
      peak.inProgress = Math.max(peak.inProgress, row.in_progress);
      peak.calling = Math.max(peak.calling, row.calling);
      peak.lagMs = Math.max(peak.lagMs, Number(row.lag_ms ?? 0));
      peak.samples += 1;
      await sleep(SAMPLE_PAUSE_MS);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
      return peak;
    },
  };
}

/**
 * Refreshes the calls table's statistics once the campaign has as many calls as its concurrency (a few
 * seconds in), unless that is not so by `deadline` (the steady window's start). Until then the
 * statistics of a database without earlier campaign calls say no call has a campaign, and PostgreSQL
 * answers the sampler's per-status reads with a walk of every call the campaign has made, filtered by
 * status, four times a sample.
 */
async function analyzeOnceCalling(db: Db, campaignId: string, deadline: number): Promise<void> {
  for (;;) {
    if (Date.now() >= deadline) return;
    const { rows } = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM (
        SELECT 1 FROM calls WHERE campaign_id = ${campaignId} LIMIT ${CAMPAIGN_MAX_CONCURRENCY}
      ) AS made`.execute(db);
    if (rows[0]!.n >= CAMPAIGN_MAX_CONCURRENCY) break;
    await sleep(100);
  }
  await sql`ANALYZE calls`.execute(db);
}

/**
 * Deletes what the campaign org's earlier runs left (their campaigns, contacts' attempts, calls with
 * their timelines, provider reports and events, and the org's status counters), and vacuums what that
 * freed: each run starts from the same tables, whatever ran before it. The credit ledger is append-only
 * and keeps its rows (the balance still adds up to them).
 */
async function removeEarlierRuns(db: Db, orgId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const calls = sql`(SELECT id FROM calls WHERE org_id = ${orgId}::uuid)`;
    await sql`DELETE FROM call_timeline WHERE call_id IN ${calls}`.execute(trx);
    await sql`DELETE FROM call_idempotency_keys WHERE call_id IN ${calls}`.execute(trx);
    await sql`DELETE FROM provider_events WHERE call_id IN ${calls}`.execute(trx);
    await sql`DELETE FROM webhook_deliveries WHERE org_id = ${orgId}::uuid`.execute(trx);
    await sql`DELETE FROM events WHERE org_id = ${orgId}::uuid`.execute(trx);
    await sql`DELETE FROM calls WHERE org_id = ${orgId}::uuid`.execute(trx);
    await sql`DELETE FROM call_placements WHERE org_id = ${orgId}::uuid`.execute(trx);
    await sql`DELETE FROM call_status_counts WHERE org_id = ${orgId}::uuid`.execute(trx);
    await sql`DELETE FROM campaign_call_counts WHERE campaign_id IN (SELECT id FROM campaigns WHERE org_id = ${orgId}::uuid)`.execute(
      trx,
    );
    // Its contacts' attempts go with each campaign (ON DELETE CASCADE).
    await sql`DELETE FROM campaigns WHERE org_id = ${orgId}::uuid`.execute(trx);
  });
  await sql`VACUUM (ANALYZE) campaign_contacts, campaigns, campaign_call_counts, call_placements, calls, call_status_counts, call_timeline, events, provider_events, orgs`.execute(
    db,
  );
}

/** How the other org's list is loaded, idle and during the dispatch. */
function listLoad(options: CampaignDispatchOptions) {
  return { seconds: options.listSeconds, rate: LIST_RATE, connections: LIST_CONNECTIONS };
}

/**
 * The other org's list at LIST_RATE with the worker idle, just after a checkpoint (so that no spread-out
 * checkpoint of earlier writes runs beside it); its 2xx latencies are added to `latencies`.
 */
async function idleLoad(
  options: CampaignDispatchOptions,
  apiServer: Child,
  latencies: number[],
): Promise<{ load: LoadResult; stealPercent: number }> {
  try {
    await sql`CHECKPOINT`.execute(options.db);
  } catch (error) {
    options.log(`campaign dispatch: no checkpoint before the idle load (${(error as Error).message})`);
  }
  const before = machineCpuTicks();
  const load = await options.load(apiServer, options.list, { ...listLoad(options), latencies });
  return { load, stealPercent: stealPercentSince(before) };
}

/** One run: a fresh worker, the idle list, the campaign for `seconds`, its cancel and drain, the idle list again. */
async function runOnce(
  options: CampaignDispatchOptions,
  apiServer: Child,
  org: { orgId: string; agentId: string; key: string },
): Promise<CampaignDispatchRun> {
  const { db, log } = options;
  // These machines run PostgreSQL without autovacuum: the vacuum clears what the clean-up freed, as
  // autovacuum would have between campaigns, so a run never pays for the one before it.
  await removeEarlierRuns(db, org.orgId);
  const worker = await options.startWorker();
  try {
    const workerIdleRssMiB = rssMiB(worker.pid) ?? NaN;
    const idleLatencies: number[] = [];
    const idleBefore = await idleLoad(options, apiServer, idleLatencies);

    const rss = sampleRss(worker.pid, 100);
    const stealBefore = machineCpuTicks();
    const cpuBefore = options.cpuMs(worker.pid);
    const postgresBefore = postgresCpuMs();
    const createStarted = performance.now();
    const created = await api<{ data: { id: string; created_at: string } }>(
      apiServer.address,
      org.key,
      'POST',
      '/campaigns',
      {
        name: 'Bench campaign',
        agent_id: org.agentId,
        contacts: { filter: {} },
        schedule: {
          timezone: 'UTC',
          windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' }],
        },
        max_concurrency: CAMPAIGN_MAX_CONCURRENCY,
      },
    );
    const createMs = performance.now() - createStarted;
    const campaignId = created.data.id;
    const startedAt = Date.parse(created.data.created_at);
    const sampler = sampleCampaign(db, campaignId);
    const analyzed = analyzeOnceCalling(db, campaignId, startedAt + STEADY_AFTER_SEC * 1000);
    const untilMs = (sec: number) => startedAt + sec * 1000 - Date.now();
    await sleep(Math.max(0, untilMs(STEADY_AFTER_SEC)));
    await analyzed;
    const listDuring = await options.load(apiServer, options.list, listLoad(options));
    await sleep(Math.max(0, untilMs(options.seconds)));
    const peak = await sampler.stop();
    const dispatchStealPercent = stealPercentSince(stealBefore);
    const elapsedMs = Date.now() - startedAt;
    const workerCpuPercent = (100 * (options.cpuMs(worker.pid) - cpuBefore)) / elapsedMs;
    const postgresCpuPercent = (100 * (postgresCpuMs() - postgresBefore)) / elapsedMs;

    const cancelAt = performance.now();
    await api(apiServer.address, org.key, 'POST', `/campaigns/${campaignId}/cancel`);
    for (;;) {
      const row = await db
        .selectFrom('campaigns')
        .select('finished_at')
        .where('id', '=', campaignId)
        .executeTakeFirstOrThrow();
      if (row.finished_at !== null) break;
      if (performance.now() - cancelAt > DRAIN_TIMEOUT_MS)
        throw new Error(`campaign ${campaignId} did not finish within ${DRAIN_TIMEOUT_MS} ms of its cancel`);
      await sleep(100);
    }
    const drainSeconds = (performance.now() - cancelAt) / 1000;
    const workerPeakRssMiB = rss.stop();
    const idleAfter = await idleLoad(options, apiServer, idleLatencies);
    const listIdle = pooledLoad([idleBefore.load, idleAfter.load], idleLatencies);
    const idleStealPercent = (idleBefore.stealPercent + idleAfter.stealPercent) / 2;

    const { rows } = await sql<{ at_ms: number }>`
      SELECT (extract(epoch FROM created_at) * 1000)::float8 AS at_ms FROM calls WHERE campaign_id = ${campaignId}`.execute(
      db,
    );
    const offsets = rows.map((row) => (row.at_ms - startedAt) / 1000);
    const within = offsets.filter((at) => at <= options.seconds);
    const steady = within.filter((at) => at >= STEADY_AFTER_SEC);
    const run: CampaignDispatchRun = {
      placed: within.length,
      perSecond: within.length / options.seconds,
      steadyPerSecond: steady.length / (options.seconds - STEADY_AFTER_SEC),
      firstPlacementMs: within.length > 0 ? Math.min(...within) * 1000 : NaN,
      peakInProgress: peak.inProgress,
      peakCalling: peak.calling,
      samples: peak.samples,
      peakProgressLagMs: peak.lagMs,
      workerIdleRssMiB,
      workerPeakRssMiB,
      workerCpuPercent,
      postgresCpuPercent,
      createMs,
      listIdle,
      listDuring,
      idleStealPercent,
      dispatchStealPercent,
      drainSeconds,
    };
    log(
      `campaign dispatch: ${run.placed} placed in ${options.seconds} s, ${run.perSecond.toFixed(0)}/s overall, ` +
        `${run.steadyPerSecond.toFixed(0)}/s steady; in progress at most ${run.peakInProgress} (${run.samples} samples), ` +
        `calling at most ${run.peakCalling}; progress lag at most ${run.peakProgressLagMs.toFixed(0)} ms; ` +
        `worker RSS ${run.workerIdleRssMiB.toFixed(0)} -> ${run.workerPeakRssMiB.toFixed(0)} MiB, CPU ${run.workerCpuPercent.toFixed(0)}% (PostgreSQL ${run.postgresCpuPercent.toFixed(0)}%); ` +
        `created in ${run.createMs.toFixed(0)} ms; ` +
        `GET /calls p99 ${listIdle.p99.toFixed(1)} ms idle (${idleBefore.load.p99.toFixed(1)} before, ${idleAfter.load.p99.toFixed(1)} after), ` +
        `${listDuring.p99.toFixed(1)} ms during; CPU steal ${idleStealPercent.toFixed(0)}% idle, ${dispatchStealPercent.toFixed(0)}% during; ` +
        `drained in ${drainSeconds.toFixed(1)} s`,
    );
    return run;
  } finally {
    await worker.stop();
  }
}

/** Runs the phase `repetitions` times; throws when a process cannot start or a campaign does not finish. */
export async function benchCampaignDispatch(options: CampaignDispatchOptions): Promise<CampaignDispatchReport> {
  const apiServer = await options.startApi();
  try {
    const runs = await repeat(options.repetitions, async () =>
      runOnce(options, apiServer, await prepareOrg(options.db, options.log)),
    );
    const scalars = medianOf(runs.map(({ listIdle: _idle, listDuring: _during, ...scalar }) => scalar));
    const listP99Ratios = runs.map((run) => run.listDuring.p99 / run.listIdle.p99);
    return {
      ...scalars,
      contacts: CAMPAIGN_CONTACTS,
      maxConcurrency: CAMPAIGN_MAX_CONCURRENCY,
      seconds: options.seconds,
      steadyAfterSec: STEADY_AFTER_SEC,
      simulatorStepMs: CAMPAIGN_SIMULATOR_STEP_MS,
      listRate: LIST_RATE,
      // The peaks are the runs' highest, not their median: a bound holds for every run or it does not.
      peakInProgress: Math.max(...runs.map((run) => run.peakInProgress)),
      peakCalling: Math.max(...runs.map((run) => run.peakCalling)),
      workerPeakRssMiB: Math.max(...runs.map((run) => run.workerPeakRssMiB)),
      listIdle: medianLoad(runs.map((run) => run.listIdle)),
      listDuring: medianLoad(runs.map((run) => run.listDuring)),
      listP99Ratios,
      listP99Ratio: median(listP99Ratios),
      runs,
    };
  } finally {
    await apiServer.stop();
  }
}
