// The sign-in flood phase (issue 38, item 2): the service behind one trusted proxy (so X-Forwarded-For
// names each client) while another org reads its contacts at a fixed rate. The other org's latencies are
// taken idle, then during rounds of the issue's flood (150 wrong sign-ins, 32 at a time, from one address
// or a new address each, with the right password from a fresh address as each round starts), then idle
// again; the runs are repeated and their latencies pooled. The flood runs in a process of its own (./sign-in-flooder.ts), so the measuring client's event
// loop only measures. A request counts for a round when it was sent between the round's first sign-in and
// its last answer.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../src/database/connect.js';
import { acceptLink, inviteMember } from '../../src/members/service.js';
import { issueApiKey } from '../../src/orgs/api-keys.js';
import { createOrg } from '../../src/orgs/service.js';
import { percentile, startProbe, type ProbeSample, type RequestSpec } from './load.js';
import { startChild, type Child } from './processes.js';
import { repeat } from './repeat.js';
import type { FloodKind, FloodPlan, FloodRound } from './sign-in-flooder.js';

/** The other org's reads: a fixed rate over a few connections. */
const PROBE_RATE = 100;
const PROBE_CONNECTIONS = 4;
/** Rounds of each kind, measured after one untimed round of each. */
export const FLOOD_ROUNDS = 16;
/** How long the idle measurement runs before the floods and again after them. */
const IDLE_SEC = 10;
/** The pause after each round. */
const GAP_MS = 1_000;
const KINDS: FloodKind[] = ['one address', 'a new address each'];
/** Issue 38's targets: the other org's p99 within this many times idle, the real sign-in within this. */
export const FLOOD_P99_RATIO = 1.5;
export const REAL_SIGN_IN_MS = 2_000;

/** The other org's latencies at one time: idle, or during one kind of flood. */
export interface LatencySummary {
  requests: number;
  p50: number;
  p99: number;
}

/** One kind of flood over one run's rounds. */
export interface FloodOfKind {
  kind: FloodKind;
  during: LatencySummary;
  /** The flood's answers over the kind's rounds, by status. */
  statuses: Record<string, number>;
  missingRetryAfter: number;
  /** The right sign-in of each round: its status, milliseconds until then and tries. */
  real: Array<{ status: number; ms: number; tries: number }>;
}

/** One run: idle before and after, and the rounds of each kind between. */
export interface SignInFloodRun {
  idle: LatencySummary;
  /** Answers to the other org that were not 2xx, over the whole run. */
  probeFailures: number;
  floods: FloodOfKind[];
}

/**
 * What the phase measured: its runs, and the latencies of all runs pooled (a p99 over thousands of
 * requests moves less from run to run than each run's own).
 */
export interface SignInFloodReport {
  rounds: number;
  probeRate: number;
  runs: SignInFloodRun[];
  idle: LatencySummary;
  probeFailures: number;
  floods: Array<{
    kind: FloodKind;
    during: LatencySummary;
    /** The pooled p99 during the kind's floods over the pooled idle p99. */
    p99Ratio: number;
    statuses: Record<string, number>;
    missingRetryAfter: number;
    real: Array<{ status: number; ms: number; tries: number }>;
  }>;
}

function summary(latencies: number[]): LatencySummary {
  const sorted = Float64Array.from(latencies).sort();
  return { requests: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

/** A dashboard member to flood (a fresh address each run, so no earlier run's failures count) and a reader org. */
async function setUp(db: Db) {
  const tag = randomUUID().slice(0, 8);
  const victimOrg = await createOrg(db, { name: `Bench sign-in flood ${tag}`, creditsPaise: 0, planId: 'bench' });
  const email = `flooded-${tag}@example.com`;
  const password = `a password of some length ${tag}`;
  const { token } = await inviteMember(
    db,
    { orgId: victimOrg.id, email, role: 'admin' },
    { actor: 'cli', address: null },
  );
  await acceptLink(db, token, password);
  const reader = await createOrg(db, { name: `Bench flood reader ${tag}`, creditsPaise: 0, planId: 'bench' });
  const { key } = await issueApiKey(db, reader.id);
  return { email, password, key };
}

/** Runs the flooder with `kinds` against `origin` and returns its rounds once it is done. */
async function flood(plan: FloodPlan): Promise<FloodRound[]> {
  const child: Child = await startChild('scripts/bench/sign-in-flooder.ts', {
    args: [JSON.stringify(plan)],
    env: process.env,
    ready: /^done$/m,
    timeoutMs: 10 * 60_000,
  });
  await child.stop();
  return child
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as FloodRound);
}

/** One run against `origin`: idle, the rounds, idle again. */
async function measureRun(origin: string, member: { email: string; password: string; key: string }, rounds: number) {
  const read = (): RequestSpec => ({
    method: 'GET',
    path: '/api/v1/contacts?limit=20',
    headers: { authorization: `Bearer ${member.key}`, 'x-forwarded-for': '10.9.9.9' },
  });
  const probe = () => startProbe({ origin, next: read, connections: PROBE_CONNECTIONS, rate: PROBE_RATE });
  const plan = (kinds: FloodKind[]): FloodPlan => ({ ...member, origin, kinds, gapMs: GAP_MS });

  // Untimed: the reads and one round of each kind, so neither side pays for compilation in the measurement.
  const warm = probe();
  await flood(plan(KINDS));
  await warm.stop();

  const idleBefore = probe();
  await sleep(IDLE_SEC * 1000);
  const before = await idleBefore.stop();
  const during = probe();
  const flooded = await flood(plan(Array.from({ length: rounds }, () => KINDS).flat()));
  const duringFloods = await during.stop();
  const idleAfter = probe();
  await sleep(IDLE_SEC * 1000);
  const after = await idleAfter.stop();

  const floods = KINDS.map((kind) => {
    const ofKind = flooded.filter((round) => round.kind === kind);
    const statuses: Record<string, number> = {};
    for (const round of ofKind)
      for (const [status, count] of Object.entries(round.statuses)) statuses[status] = (statuses[status] ?? 0) + count;
    const inRound = (sample: ProbeSample) =>
      ofKind.some((round) => sample.sentAt >= round.startedAt && sample.sentAt <= round.endedAt);
    const during = duringFloods.samples.filter(inRound).map((sample) => sample.ms);
    return {
      kind,
      latencies: during,
      during: summary(during),
      statuses,
      missingRetryAfter: ofKind.reduce((sum, round) => sum + round.missingRetryAfter, 0),
      real: ofKind.map((round) => round.real),
    };
  });
  const idle = [...before.samples, ...after.samples].map((sample) => sample.ms);
  return {
    idleLatencies: idle,
    idle: summary(idle),
    probeFailures: before.failures + duringFloods.failures + after.failures,
    floods,
  };
}

/**
 * Measures the other org's reads idle and during the floods against `service` (started with
 * TRUST_PROXY_HOPS=1), `repetitions` times.
 */
export async function benchSignInFlood(options: {
  db: Db;
  service: Child;
  rounds: number;
  repetitions: number;
  log: (message: string) => void;
}): Promise<SignInFloodReport> {
  const member = await setUp(options.db);
  const measured = await repeat(options.repetitions, async () => {
    const run = await measureRun(options.service.address, member, options.rounds);
    for (const flood of run.floods) {
      options.log(
        `sign-in flood from ${flood.kind}: other org p99 ${flood.during.p99.toFixed(1)} ms vs ${run.idle.p99.toFixed(1)} idle, ` +
          `right sign-in at most ${Math.max(...flood.real.map((real) => real.ms))} ms`,
      );
    }
    return run;
  });
  const idle = summary(measured.flatMap((run) => run.idleLatencies));
  return {
    rounds: options.rounds,
    probeRate: PROBE_RATE,
    runs: measured.map((run) => ({
      idle: run.idle,
      probeFailures: run.probeFailures,
      floods: run.floods.map(({ latencies: _pooledBelow, ...flood }) => flood),
    })),
    idle,
    probeFailures: measured.reduce((sum, run) => sum + run.probeFailures, 0),
    floods: KINDS.map((kind, index) => {
      const ofKind = measured.map((run) => run.floods[index]!);
      const during = summary(ofKind.flatMap((flood) => flood.latencies));
      const statuses: Record<string, number> = {};
      for (const flood of ofKind)
        for (const [status, count] of Object.entries(flood.statuses))
          statuses[status] = (statuses[status] ?? 0) + count;
      return {
        kind,
        during,
        p99Ratio: during.p99 / idle.p99,
        statuses,
        missingRetryAfter: ofKind.reduce((sum, flood) => sum + flood.missingRetryAfter, 0),
        real: ofKind.flatMap((flood) => flood.real),
      };
    }),
  };
}
