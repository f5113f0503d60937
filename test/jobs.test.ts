// The job engine (src/jobs/, pg-boss) on a real database: a key keeps one job waiting, a successor may
// be queued while its key's job runs and starts only after it, a job waits for its time, a periodic job
// runs once per interval across two processes, a job whose worker was killed with SIGKILL runs again
// on the other worker, stop lets runs in flight finish within its bound (and tells a periodic run at
// once), and an engine lives through a database outage and carries on by itself.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectDatabase } from '../src/database/connect.js';
import { createLogger } from '../src/logger.js';
import { spawnReady, type ReadyChild } from './support/child-process.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { startOwnPostgres } from './support/own-postgres.js';
import {
  createRunTable,
  recordedRuns,
  recordingHandler,
  testEngine,
  type RecordedRun,
  type TestEngine,
} from './support/test-jobs.js';

let database: TestDatabase;
const engines: TestEngine[] = [];
const children: ReadyChild[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  await createRunTable(database.db);
});

afterEach(async () => {
  for (const child of children.splice(0)) child.process.kill('SIGKILL');
  await Promise.all(engines.splice(0).map((engine) => engine.stop(1_000)));
});

afterAll(async () => {
  await database?.drop();
});

function engine(url = database.url, logger = createLogger('silent')): TestEngine {
  const created = testEngine(url, { logger });
  engines.push(created);
  return created;
}

/** A worker process over the test database (test/support/job-worker-process.ts). */
async function workerProcess(env: Record<string, string> = {}): Promise<ReadyChild> {
  const child = await spawnReady(process.execPath, ['--import', 'tsx', 'test/support/job-worker-process.ts'], {
    env: { ...process.env, JOB_DATABASE_URL: database.url, ...env },
    ready: /ready/,
    timeoutMs: 60_000,
    name: 'job worker',
  });
  children.push(child);
  return child;
}

async function runsOf(label: string): Promise<RecordedRun[]> {
  return recordedRuns(database.db, label);
}

describe('send', () => {
  it('keeps one job waiting per key; a job without a key is always queued', async () => {
    const jobs = engine();
    const first = await jobs.send('test.record', { label: 'dedupe' }, { key: 'contact-1' });
    expect(first).toEqual(expect.any(String));
    expect(await jobs.send('test.record', { label: 'dedupe' }, { key: 'contact-1' })).toBeNull();
    expect(await jobs.send('test.record', { label: 'dedupe' }, { key: 'contact-2' })).toEqual(expect.any(String));
    const [a, b] = [
      await jobs.send('test.record', { label: 'dedupe' }),
      await jobs.send('test.record', { label: 'dedupe' }),
    ];
    expect(a).toEqual(expect.any(String));
    expect(b).toEqual(expect.any(String));
    expect(a).not.toBe(b);
    // Worked off, the four jobs run once each.
    await jobs.work('test.record', recordingHandler(database.db), { concurrency: 4 });
    await expect
      .poll(async () => (await runsOf('dedupe')).filter((run) => run.ended_at).length, { timeout: 30_000 })
      .toBe(4);
    await sleep(1_500);
    expect(await runsOf('dedupe')).toHaveLength(4);
  });

  it("queues a successor while its key's job runs, and starts it only once that one ended", async () => {
    const jobs = engine();
    await jobs.work('test.record', recordingHandler(database.db), { concurrency: 4 });
    expect(await jobs.send('test.record', { label: 'successor', holdMs: 2_000 }, { key: 'k' })).not.toBeNull();
    await expect.poll(async () => (await runsOf('successor')).length, { timeout: 30_000 }).toBe(1);
    // The first runs: one successor may wait, a second may not.
    expect(await jobs.send('test.record', { label: 'successor', holdMs: 0 }, { key: 'k' })).not.toBeNull();
    expect(await jobs.send('test.record', { label: 'successor', holdMs: 0 }, { key: 'k' })).toBeNull();
    await expect
      .poll(async () => (await runsOf('successor')).filter((run) => run.ended_at).length, { timeout: 30_000 })
      .toBe(2);
    const [first, second] = await runsOf('successor');
    expect(second!.started_at.getTime()).toBeGreaterThanOrEqual(first!.ended_at!.getTime());
  });

  it('runs a job at its time, not before', async () => {
    const jobs = engine();
    await jobs.work('test.record', recordingHandler(database.db));
    const runAt = new Date(Date.now() + 2_000);
    await jobs.send('test.record', { label: 'later' }, { runAt });
    await expect.poll(async () => (await runsOf('later')).length, { timeout: 30_000 }).toBe(1);
    expect((await runsOf('later'))[0]!.started_at.getTime()).toBeGreaterThanOrEqual(runAt.getTime());
  });
});

describe('every', () => {
  it('runs once per interval across two processes, never two runs at once', { timeout: 120_000 }, async () => {
    const intervalMs = 1_000;
    await Promise.all([1, 2].map(() => workerProcess({ JOB_TICK_MS: String(intervalMs), JOB_TICK_HOLD_MS: '300' })));
    await expect
      .poll(async () => (await runsOf('tick')).filter((run) => run.ended_at).length, { timeout: 60_000, interval: 500 })
      .toBeGreaterThanOrEqual(6);
    const runs = (await runsOf('tick')).filter((run) => run.ended_at);
    for (let i = 1; i < runs.length; i += 1) {
      const [before, run] = [runs[i - 1]!, runs[i]!];
      expect(run.started_at.getTime()).toBeGreaterThanOrEqual(before.ended_at!.getTime());
      // A run is due one interval after the one before began (counted from just before its handler).
      expect(run.started_at.getTime() - before.started_at.getTime()).toBeGreaterThanOrEqual(intervalMs - 100);
    }
  });
});

describe('a worker killed with SIGKILL', () => {
  it('has its job run again by the other worker', { timeout: 120_000 }, async () => {
    const workers = await Promise.all([workerProcess(), workerProcess()]);
    const jobs = engine();
    await jobs.send('test.record', { label: 'killed', holdFirstAttemptMs: 600_000 });
    await expect.poll(async () => (await runsOf('killed')).length, { timeout: 30_000 }).toBe(1);
    const [first] = await runsOf('killed');
    const victim = workers.find((worker) => worker.process.pid === first!.pid)!;
    victim.process.kill('SIGKILL');
    await victim.exited;
    // Its heartbeat stops; the survivor's supervision fails the run and the job runs again there.
    await expect
      .poll(async () => (await runsOf('killed')).filter((run) => run.ended_at).length, {
        timeout: 60_000,
        interval: 500,
      })
      .toBe(1);
    const runs = await runsOf('killed');
    expect(runs).toHaveLength(2);
    expect(runs[1]!.attempt).toBe(2);
    expect(runs[1]!.ended_at).toBeInstanceOf(Date);
    expect(runs[1]!.pid).not.toBe(first!.pid);
  });
});

describe('stop', () => {
  it('lets a run in flight finish within its bound', async () => {
    const jobs = testEngine(database.url);
    await jobs.work('test.record', recordingHandler(database.db));
    await jobs.send('test.record', { label: 'graceful', holdMs: 1_500 });
    await expect.poll(async () => (await runsOf('graceful')).length, { timeout: 30_000 }).toBe(1);
    await jobs.stop(10_000);
    expect((await runsOf('graceful'))[0]!.ended_at).toBeInstanceOf(Date);
  });

  it("aborts a periodic run's signal as soon as it begins to stop, so the run ends within the bound", async () => {
    const jobs = testEngine(database.url);
    let runSignal: AbortSignal | undefined;
    await jobs.every('test.tick', 200, async (signal) => {
      runSignal = signal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    });
    await expect.poll(() => runSignal, { timeout: 30_000 }).toBeDefined();
    expect(runSignal!.aborted).toBe(false);
    const stopped = jobs.stop(60_000);
    expect(runSignal!.aborted).toBe(true);
    await stopped;
  });

  it('gives up on a run past its bound, and another worker runs the job again', { timeout: 60_000 }, async () => {
    const jobs = testEngine(database.url);
    await jobs.work('test.record', recordingHandler(database.db));
    await jobs.send('test.record', { label: 'cut', holdFirstAttemptMs: 600_000 });
    await expect.poll(async () => (await runsOf('cut')).length, { timeout: 30_000 }).toBe(1);
    await jobs.stop(1_000);
    const other = engine();
    await other.work('test.record', recordingHandler(database.db));
    await expect
      .poll(async () => (await runsOf('cut')).some((run) => run.attempt === 2 && run.ended_at), { timeout: 30_000 })
      .toBe(true);
  });
});

describe('a database outage', () => {
  it(
    'makes sends fail fast, and the engine carries on by itself once the database is back',
    { timeout: 180_000 },
    async () => {
      const cluster = await startOwnPostgres();
      const { db } = connectDatabase(cluster.url, { poolSize: 2 });
      const lines: string[] = [];
      const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
      try {
        await createRunTable(db);
        const jobs = engine(cluster.url, logger);
        await jobs.work('test.record', recordingHandler(db));
        await jobs.send('test.record', { label: 'before' });
        await expect.poll(async () => (await recordedRuns(db, 'before')).length, { timeout: 30_000 }).toBe(1);

        await cluster.stop();
        await expect(jobs.send('test.record', { label: 'during' })).rejects.toThrow();
        await sleep(3_000);
        await cluster.start();

        // Sends work again, and the worker that was polling through the outage runs them.
        await expect
          .poll(async () => jobs.send('test.record', { label: 'after' }).catch(() => 'refused'), {
            timeout: 60_000,
            interval: 500,
          })
          .toEqual(expect.stringMatching(/^[0-9a-f-]{36}$/));
        await expect
          .poll(async () => (await recordedRuns(db, 'after')).length, { timeout: 60_000, interval: 500 })
          .toBe(1);
        // The outage is logged when it begins and when it ends, not at every failed poll.
        const count = (prefix: string) =>
          lines.filter((line) => (JSON.parse(line) as { msg: string }).msg.startsWith(prefix)).length;
        await expect.poll(() => count('job engine resumed'), { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
        expect(count('job engine paused')).toBe(count('job engine resumed'));
        expect(count('job engine paused')).toBeLessThanOrEqual(2);
      } finally {
        await db.destroy();
        await cluster.destroy();
      }
    },
  );
});
