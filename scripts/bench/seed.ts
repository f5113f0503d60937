// Reproducible bulk seed for the benchmark: set-based SQL (generate_series), never the API. Ids and
// values are derived from row numbers, so two seeds of an empty database hold the same data.
import { sql } from 'kysely';
import type { Db } from '../../src/database/connect.js';
import { issueApiKey } from '../../src/orgs/api-keys.js';
import { loadConfig } from '../../src/config.js';
import { acceptLink, inviteMember, listMembers, removeMember } from '../../src/members/service.js';
import { startSession } from '../../src/members/sessions.js';
import { SESSION_COOKIE } from '../../src/dashboard/cookies.js';

// The seeded sizes.
const SEED = {
  bigCalls: 1_000_000,
  smallCalls: 1_000,
  contacts: 100_000,
  listedWebhooks: 20,
  hookOrgs: 3,
  /** Calls of the big org with a timeline (every 100th); the detail scenario reads these. */
  timelineEvery: 100,
  /** Requests per minute of the `bench` plan: high enough never to throttle, so the limiter stays on the path. */
  planRateLimit: 10_000_000,
  balancePaise: 1_000_000_000_000,
} as const;

/** An org the benchmark drives, with a fresh API key for this run. */
export interface BenchOrg {
  orgId: string;
  agentId: string;
  key: string;
}

/** What the scenarios need to know about the seeded data. */
export interface BenchFixture {
  big: BenchOrg;
  small: BenchOrg;
  hooks: BenchOrg[];
  /** Big-org calls that have a timeline, spread over the whole table. */
  detailCallIds: string[];
  /** A dashboard session cookie (`name=value`) of an admin of the big org, for the dashboard's pages. */
  dashboardCookie: string;
  /** Whether this run seeded (false: the data of an earlier run was reused). */
  seeded: boolean;
  seedMs: number;
}

const ORG_NAMES = {
  big: 'Bench big (1,000,000 calls)',
  small: 'Bench small (1,000 calls)',
  hook: (n: number) => `Bench webhooks ${n}`,
};

// A deterministic UUID (version 4 layout) from a text.
const uuidOf = (text: ReturnType<typeof sql>) =>
  sql`overlay(overlay(md5(${text}) placing '4' from 13) placing '8' from 17)::uuid`;

// Four completed-call outcomes, as the simulator produces them (transcript shortened to four turns).
const OUTCOMES = sql`(VALUES
  (0, 'book_demo', 'positive', 'demo_booked', 'Hello, this call may be recorded for quality. I am calling about the demo you asked for.', 'Yes, I filled in the form last week.'),
  (1, 'request_callback', 'neutral', 'callback_scheduled', 'Hello, this call may be recorded for quality. Is this a good time to talk?', 'Not really, I am driving.'),
  (2, 'speak_to_human', 'neutral', 'handed_off', 'Hello, this call may be recorded for quality. I can help with your billing question.', 'I would rather speak to a person, please.'),
  (3, 'not_interested', 'negative', 'declined', 'Hello, this call may be recorded for quality. I am calling about our new savings plan.', 'I am not interested, please do not call again.')
) AS o(n, intent, sentiment, outcome, line1, line2)`;

async function insertOrg(trx: Db, tag: string, name: string): Promise<{ orgId: string; agentId: string }> {
  const { rows } = await sql<{ org_id: string; agent_id: string }>`
    WITH org AS (
      INSERT INTO orgs (id, name, plan_id, default_from_e164, balance_paise, created_at)
      VALUES (${uuidOf(sql`${`org:${tag}`}`)}, ${name}, 'bench', '+918045678901', ${SEED.balancePaise}, '2026-01-01T00:00:00Z')
      RETURNING id
    ), ledger AS (
      INSERT INTO credit_ledger (org_id, amount_paise, kind, note, created_at)
      SELECT id, ${SEED.balancePaise}, 'top_up', 'benchmark opening balance', '2026-01-01T00:00:00Z' FROM org
    )
    INSERT INTO agents (id, org_id, name, language, max_duration_sec, from_e164, rate_paise_per_minute, created_at)
    SELECT ${uuidOf(sql`${`agent:${tag}`}`)}, id, 'Bench agent', 'en-IN', 600, NULL, 200, '2026-01-01T00:00:00Z' FROM org
    RETURNING org_id, id AS agent_id`.execute(trx);
  const row = rows[0]!;
  return { orgId: row.org_id, agentId: row.agent_id };
}

/**
 * `count` calls for an org over the 180 days before 2026-11-01, newest last, in all nine statuses
 * (interleaved: a multiplicative permutation of the row number picks the status). Seeded calls are
 * never due for progress (next_step_at NULL), so the call worker leaves them as they are.
 */
async function insertCalls(trx: Db, tag: string, org: { orgId: string; agentId: string }, count: number) {
  await sql`
    INSERT INTO calls (id, org_id, agent_id, status, from_e164, to_e164, language, max_duration_sec,
      rate_paise_per_minute, hold_paise, metadata, provider, provider_call_id, progress_cursor, next_step_at,
      duration_sec, credits_debited_paise, recording_url, llm_extracted_intent, llm_sentiment, llm_outcome,
      reason, transcript, started_at, ended_at, created_at)
    SELECT id, ${org.orgId}::uuid, ${org.agentId}::uuid, status, '+918045678901', to_e164,
      CASE WHEN i % 3 = 0 THEN 'hi-IN' ELSE 'en-IN' END, 600, 200, 2000,
      jsonb_build_object('crm_id', 'lead-' || i), 'simulator', provider_call_id,
      CASE WHEN status IN ('queued') THEN 0 ELSE 3 END, NULL,
      duration, CASE WHEN duration IS NULL THEN 0 ELSE ceil(duration * 200 / 60.0)::bigint END,
      CASE WHEN status = 'completed' THEN 'https://recordings.simulator.example.com/' || provider_call_id || '.mp3' END,
      CASE WHEN status = 'completed' THEN o.intent END,
      CASE WHEN status = 'completed' THEN o.sentiment END,
      CASE WHEN status = 'completed' THEN o.outcome END,
      CASE status WHEN 'failed' THEN 'carrier_rejected' WHEN 'no_answer' THEN 'no_answer' WHEN 'busy' THEN 'busy'
                  WHEN 'canceled' THEN 'canceled_by_client' END,
      CASE WHEN status = 'completed' THEN jsonb_build_array(
        jsonb_build_object('role', 'agent', 'text', o.line1, 'start_ms', 200, 'end_ms', 4800),
        jsonb_build_object('role', 'contact', 'text', o.line2, 'start_ms', 5200, 'end_ms', 9800)) END,
      CASE WHEN status IN ('in_progress', 'completed') THEN created_at + interval '5 seconds' END,
      CASE WHEN status IN ('completed', 'failed', 'no_answer', 'busy', 'canceled')
           THEN created_at + make_interval(secs => 5 + coalesce(duration, 20)) END,
      created_at
    FROM (
      SELECT i, ${uuidOf(sql`${`call:${tag}:`} || i`)} AS id,
        'sim_seed_' || ${tag} || '_' || i AS provider_call_id,
        '+9198' || lpad((i % 100000000)::text, 8, '0') AS to_e164,
        timestamptz '2026-11-01T00:00:00Z' - make_interval(secs => (${count} - i) * (15552000.0 / ${count})) AS created_at,
        CASE
          WHEN k < 550 THEN 'completed' WHEN k < 630 THEN 'failed' WHEN k < 780 THEN 'no_answer'
          WHEN k < 880 THEN 'busy' WHEN k < 950 THEN 'canceled' WHEN k < 962 THEN 'queued'
          WHEN k < 974 THEN 'dialing' WHEN k < 986 THEN 'ringing' ELSE 'in_progress'
        END AS status,
        CASE WHEN k < 550 THEN 20 + i % 41 END AS duration
      FROM generate_series(1, ${count}) AS i, LATERAL (SELECT (i::bigint * 7919) % 1000 AS k) AS perm
    ) AS s
    JOIN ${OUTCOMES} ON o.n = s.i % 4`.execute(trx);
}

/** The status chain of each selected call as timeline entries, consistent with its status. */
async function insertTimelines(trx: Db, orgId: string, every: number) {
  await sql`
    INSERT INTO call_timeline (call_id, at, kind, detail)
    SELECT c.id, c.created_at + make_interval(secs => step.offset_s), step.kind, step.detail
    FROM calls c CROSS JOIN LATERAL (VALUES
      (0.0, 'status-changed', '{"status":"queued"}'::jsonb, true),
      (1.0, 'status-changed', '{"status":"dialing"}'::jsonb, c.status <> 'queued' AND c.status <> 'canceled'),
      (2.0, 'status-changed', '{"status":"ringing"}'::jsonb, c.status IN ('ringing', 'in_progress', 'completed', 'no_answer')),
      (5.0, 'status-changed', '{"status":"in_progress"}'::jsonb, c.status IN ('in_progress', 'completed')),
      (6.0, 'disclosure-played', '{}'::jsonb, c.status IN ('in_progress', 'completed')),
      (extract(epoch FROM c.ended_at - c.created_at)::float8, 'status-changed',
        jsonb_strip_nulls(jsonb_build_object('status', c.status, 'reason', c.reason)), c.ended_at IS NOT NULL)
    ) AS step(offset_s, kind, detail, applies)
    WHERE c.org_id = ${orgId}::uuid AND step.applies
      AND (${every}::int = 1 OR substring(c.provider_call_id FROM '[0-9]+$')::bigint % ${every} = 0)`.execute(trx);
}

async function insertContacts(trx: Db, orgId: string, count: number) {
  await sql`
    INSERT INTO contacts (id, org_id, phone_e164, name, email, language_pref, metadata, consent_capture, created_at, updated_at)
    SELECT ${uuidOf(sql`'contact:' || i`)}, ${orgId}::uuid, '+9170' || lpad(i::text, 8, '0'), 'Contact ' || i,
      CASE WHEN i % 2 = 0 THEN 'contact' || i || '@example.com' END,
      CASE WHEN i % 3 = 0 THEN 'hi-IN' WHEN i % 3 = 1 THEN 'en-IN' END,
      jsonb_build_object('tier', CASE WHEN i % 5 = 0 THEN 'gold' ELSE 'standard' END, 'crm_id', i),
      (ARRAY['pre_call', 'website_form', 'manual', 'imported'])[1 + i % 4],
      created, created
    FROM generate_series(1, ${count}) AS i,
      LATERAL (SELECT timestamptz '2026-11-01T00:00:00Z' - make_interval(secs => (${count} - i) * 60) AS created) AS t`.execute(
    trx,
  );
}

/** Endpoints for the list scenario; subscribed to call.busy, which nothing emits during the benchmark. */
async function insertListedWebhooks(trx: Db, orgId: string, count: number) {
  await sql`
    INSERT INTO webhooks (id, org_id, url, events, active, secret, last_delivery_at, last_delivery_status, created_at, updated_at)
    SELECT ${uuidOf(sql`'webhook:' || i`)}, ${orgId}::uuid, 'https://crm-' || i || '.example.com/hooks', ARRAY['call.busy'],
      true, md5('secret-a:' || i) || md5('secret-b:' || i),
      timestamptz '2026-10-31T00:00:00Z' + make_interval(mins => i), CASE WHEN i % 4 = 0 THEN 503 ELSE 200 END,
      timestamptz '2026-01-01T00:00:00Z' + make_interval(days => i), timestamptz '2026-01-01T00:00:00Z' + make_interval(days => i)
    FROM generate_series(1, ${count}) AS i`.execute(trx);
}

/** Runs one seeding step and reports how long it took on stderr. */
async function step(name: string, work: () => Promise<unknown>): Promise<void> {
  const started = performance.now();
  await work();
  process.stderr.write(`[bench] seeded ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
}

async function seedAll(db: Db): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // The pool's 30 s statement timeout is for requests; a bulk seed takes longer.
    await sql`SET LOCAL statement_timeout = 0`.execute(trx);
    await sql`INSERT INTO plans (id, name, rate_limit_per_minute, active) VALUES ('bench', 'Benchmark', ${SEED.planRateLimit}, true)`.execute(
      trx,
    );
    const big = await insertOrg(trx, 'big', ORG_NAMES.big);
    const small = await insertOrg(trx, 'small', ORG_NAMES.small);
    for (let n = 1; n <= SEED.hookOrgs; n += 1) await insertOrg(trx, `hooks${n}`, ORG_NAMES.hook(n));
    await step('calls', async () => {
      await insertCalls(trx, 'big', big, SEED.bigCalls);
      await insertCalls(trx, 'small', small, SEED.smallCalls);
      // Statistics that know the new rows (ANALYZE samples this transaction's own inserts), so the
      // statements that read them below get plans made for a million rows, not for an empty table.
      await sql`ANALYZE calls`.execute(trx);
    });
    await step('timelines', async () => {
      await insertTimelines(trx, big.orgId, SEED.timelineEvery);
      await insertTimelines(trx, small.orgId, 1);
    });
    await step('status counters', () =>
      sql`
        INSERT INTO call_status_counts (org_id, status, count)
        SELECT org_id, status, count(*) FROM calls WHERE org_id IN (${big.orgId}::uuid, ${small.orgId}::uuid)
        GROUP BY org_id, status`.execute(trx),
    );
    await step('contacts', () => insertContacts(trx, big.orgId, SEED.contacts));
    await insertListedWebhooks(trx, big.orgId, SEED.listedWebhooks);
  });
  // Set hint bits and the visibility map, and give the planner fresh statistics.
  await step('VACUUM ANALYZE', () =>
    sql`VACUUM (ANALYZE) calls, call_timeline, call_status_counts, contacts, webhooks, orgs, agents, credit_ledger`.execute(
      db,
    ),
  );
  // Write the seeded pages out now: otherwise the checkpointer does it during the first scenarios
  // (the 1,000,000-call org's), which made them slower than the same scenarios on reused data.
  // Needs a superuser or pg_checkpoint; without them the run goes on and the first scenarios pay.
  await sql`CHECKPOINT`.execute(db).catch((error: unknown) => {
    process.stderr.write(
      `[bench] CHECKPOINT after seeding refused (${(error as Error).message}); the first scenarios may be slower\n`,
    );
  });
}

async function orgByName(db: Db, name: string): Promise<{ orgId: string; agentId: string }> {
  const row = await db
    .selectFrom('orgs')
    .innerJoin('agents', 'agents.org_id', 'orgs.id')
    .select(['orgs.id as orgId', 'agents.id as agentId'])
    .where('orgs.name', '=', name)
    .executeTakeFirstOrThrow();
  return row;
}

/** A fresh API key for the org (this run's keys replace earlier runs'). */
async function withKey(db: Db, org: { orgId: string; agentId: string }): Promise<BenchOrg> {
  await db.deleteFrom('api_keys').where('org_id', '=', org.orgId).execute();
  const { key } = await issueApiKey(db, org.orgId);
  return { ...org, key };
}

/**
 * Seeds an empty benchmark database (one transaction, then VACUUM ANALYZE), or reuses the data of an
 * earlier run when the `bench` plan exists (removing that run's leftovers, then VACUUM ANALYZE). Issues
 * this run's API keys. Throws on database errors.
 */
export async function seedBenchmark(db: Db): Promise<BenchFixture> {
  const started = performance.now();
  const existing = await db.selectFrom('plans').select('id').where('id', '=', 'bench').executeTakeFirst();
  if (!existing) await seedAll(db);
  const seedMs = performance.now() - started;
  const big = await withKey(db, await orgByName(db, ORG_NAMES.big));
  const small = await withKey(db, await orgByName(db, ORG_NAMES.small));
  const hooks: BenchOrg[] = [];
  for (let n = 1; n <= SEED.hookOrgs; n += 1) hooks.push(await withKey(db, await orgByName(db, ORG_NAMES.hook(n))));
  if (existing) {
    // Leftovers of an earlier run that would add background work to this one: its webhook endpoints, in
    // any org but the big one's listed ones (their receivers are gone, retries would keep failing), and
    // the calls its POST /calls placed (they take their next step 10 minutes later, SIMULATOR_STEP_MS):
    // parked, never advanced.
    await db.deleteFrom('webhooks').where('org_id', '<>', big.orgId).execute();
    await db.updateTable('calls').set({ next_step_at: null }).where('next_step_at', 'is not', null).execute();
    // Clear the dead rows of those deletions (and of the earlier run's delivery phases) now, so that
    // autovacuum does not do it in the middle of a measured run.
    await sql`VACUUM (ANALYZE) webhooks, webhook_deliveries, webhook_attempts, webhook_delivery_counts, events, calls, call_timeline, call_status_counts, contacts, credit_ledger, api_keys, rate_limit_buckets`.execute(
      db,
    );
  }
  const step = SEED.timelineEvery * 5;
  const providerIds = Array.from({ length: SEED.bigCalls / step }, (_, n) => `sim_seed_big_${(n + 1) * step}`);
  const detail = await db
    .selectFrom('calls')
    .select('id')
    .where('provider', '=', 'simulator')
    .where('provider_call_id', 'in', providerIds)
    .execute();
  return {
    big,
    small,
    hooks,
    detailCallIds: detail.map((row) => row.id),
    dashboardCookie: await dashboardSession(db, big.orgId),
    seeded: !existing,
    seedMs,
  };
}

/** A new dashboard admin of the org (replacing an earlier run's) signed in; returns the session cookie. */
async function dashboardSession(db: Db, orgId: string): Promise<string> {
  const email = 'bench-admin@bench.example';
  const by = { actor: 'cli', address: null };
  const earlier = (await listMembers(db, orgId)).find((member) => member.email === email);
  if (earlier) await removeMember(db, earlier, { by });
  const { token } = await inviteMember(db, { orgId, email, role: 'admin' }, by);
  const user = await acceptLink(db, token, 'bench admin password');
  const config = loadConfig(process.env);
  const lifetimes = { idleMs: config.dashboardSessionIdleMs, absoluteMs: config.dashboardSessionAbsoluteMs };
  const { token: session } = await startSession(db, user, lifetimes, new Date(), null);
  return `${SESSION_COOKIE}=${session}`;
}
