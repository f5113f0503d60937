// Records the SQL a service function actually sends (through Kysely's query log, transaction control
// included), so the baseline replays exactly the statements the service runs and cannot drift from them.
import type pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Db } from '../../src/database/connect.js';

/** One statement as sent to PostgreSQL. */
export interface Statement {
  sql: string;
  parameters: unknown[];
}

/** A request's statements in steps; the statements of one step were sent concurrently. */
export type StatementPlan = Statement[][];

interface Timed extends Statement {
  start: number;
  end: number;
}

/**
 * Runs `work` once against the database behind `pool` and returns the statements it sent, grouped
 * into steps by overlap in time (sequential statements get a step each). Rethrows `work`'s errors.
 */
export async function captureStatements(pool: pg.Pool, work: (db: Db) => Promise<unknown>): Promise<StatementPlan> {
  const timed: Timed[] = [];
  // Not destroyed: that would end the shared pool.
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool }),
    log: (event) => {
      const end = performance.now();
      timed.push({
        sql: event.query.sql,
        parameters: [...event.query.parameters],
        start: end - event.queryDurationMillis,
        end,
      });
    },
  });
  await work(db);
  timed.sort((a, b) => a.start - b.start);
  const steps: StatementPlan = [];
  let stepEnd = -Infinity;
  for (const { sql, parameters, start, end } of timed) {
    if (start < stepEnd) {
      steps[steps.length - 1]!.push({ sql, parameters });
      stepEnd = Math.max(stepEnd, end);
    } else {
      steps.push([{ sql, parameters }]);
      stepEnd = end;
    }
  }
  return steps;
}
