// Job kinds of the job engine's tests, an engine over them, and the table their handlers record runs in
// (job_runs, created by the test in its own database): which job ran, in which process, which attempt,
// and when it began and ended.
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../../src/database/connect.js';
import { createJobEngine, type JobEngine, type JobRun } from '../../src/jobs/engine.js';
import { jobKind, periodicKind } from '../../src/jobs/registry.js';
import { createLogger } from '../../src/logger.js';
import { createMetrics, type Metrics } from '../../src/observability/metrics.js';

/** The tests' kinds: a job that records its run and holds it a while, and a periodic one. */
export const TEST_JOBS = {
  'test.record': jobKind<{ label: string; holdMs?: number; holdFirstAttemptMs?: number }>({ retries: 2 }),
  'test.tick': periodicKind(),
} as const;

export type TestEngine = JobEngine<typeof TEST_JOBS>;

/** A worker engine over the tests' kinds on `url`, polling every half second. */
export function testEngine(url: string, options: { logger?: Logger; metrics?: Metrics } = {}): TestEngine {
  return createJobEngine(TEST_JOBS, {
    url,
    config: { jobPoolSize: 3, jobPollIntervalMs: 500, dbConnectTimeoutMs: 3_000 },
    logger: options.logger ?? createLogger('silent'),
    metrics: options.metrics ?? createMetrics('worker'),
    supervise: true,
  });
}

/** One recorded run. */
export interface RecordedRun {
  label: string;
  attempt: number;
  pid: number;
  started_at: Date;
  ended_at: Date | null;
}

/** Creates the table runs are recorded in. */
export async function createRunTable(db: Db): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS job_runs (
    id bigserial PRIMARY KEY, label text NOT NULL, attempt int NOT NULL, pid int NOT NULL,
    started_at timestamptz NOT NULL, ended_at timestamptz)`.execute(db);
}

/** Every recorded run, in the order they began. */
export async function recordedRuns(db: Db, label?: string): Promise<RecordedRun[]> {
  const { rows } = await sql<RecordedRun>`
    SELECT label, attempt, pid, started_at, ended_at FROM job_runs
    WHERE ${label ?? null}::text IS NULL OR label = ${label ?? null}
    ORDER BY started_at, id`.execute(db);
  return rows;
}

/**
 * A handler that records its run: the row when it begins, its end when it ends, holding `holdMs` (or,
 * on a first attempt, `holdFirstAttemptMs`) in between unless the run is aborted.
 */
export function recordingHandler(db: Db) {
  return async (data: { label: string; holdMs?: number; holdFirstAttemptMs?: number }, run: JobRun) => {
    const { rows } = await sql<{ id: string }>`
      INSERT INTO job_runs (label, attempt, pid, started_at)
      VALUES (${data.label}, ${run.attempt}, ${process.pid}, ${new Date()}) RETURNING id`.execute(db);
    const hold = run.attempt === 1 && data.holdFirstAttemptMs !== undefined ? data.holdFirstAttemptMs : data.holdMs;
    if (hold) await sleep(hold, undefined, { signal: run.signal }).catch(() => undefined);
    await sql`UPDATE job_runs SET ended_at = ${new Date()} WHERE id = ${rows[0]!.id}`.execute(db);
  };
}
