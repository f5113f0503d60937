// A job engine worker in its own process, for the job engine's tests: started by a test and killed with
// SIGKILL. Reads JOB_DATABASE_URL, and JOB_TICK_MS to run the periodic test.tick (recording each run,
// held JOB_TICK_HOLD_MS) instead of working test.record jobs; prints "ready" once registered.
import { connectDatabase } from '../../src/database/connect.js';
import { recordingHandler, testEngine } from './test-jobs.js';

const url = process.env.JOB_DATABASE_URL!;
const { db } = connectDatabase(url, { poolSize: 4 });
const engine = testEngine(url);
const record = recordingHandler(db);
const tickMs = Number(process.env.JOB_TICK_MS ?? 0);
if (tickMs > 0) {
  const holdMs = Number(process.env.JOB_TICK_HOLD_MS ?? 0);
  await engine.every('test.tick', tickMs, (signal) =>
    record({ label: 'tick', holdMs }, { id: '', attempt: 1, signal }),
  );
} else {
  await engine.work('test.record', record, { concurrency: 2 });
}
process.stdout.write('ready\n');
