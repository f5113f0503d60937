// Records the SQL a service function actually sends (through Kysely's query log, transaction control
// included), so the baseline replays exactly the statements the service runs and cannot drift from them.
// Each statement also records whether the service runs it as a prepared statement, so a fair floor can
// prepare the same ones.
import type pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Db } from '../../src/database/connect.js';
import { namedStatementOf } from '../../src/database/named-statements.js';

/** One statement as sent to PostgreSQL. */
export interface Statement {
  sql: string;
  parameters: unknown[];
  /**
   * The name the service prepares this statement under (it does so with DB_NAMED_STATEMENTS on, the
   * default), or undefined when the service sends it unprepared.
   */
  name?: string;
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
    const name = namedStatementOf(sql);
    const statement: Statement = name === undefined ? { sql, parameters } : { sql, parameters, name };
    if (start < stepEnd) {
      steps[steps.length - 1]!.push(statement);
      stepEnd = Math.max(stepEnd, end);
    } else {
      steps.push([statement]);
      stepEnd = end;
    }
  }
  return steps;
}
