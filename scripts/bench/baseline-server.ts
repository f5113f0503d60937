// The floor of the stack: a bare Koa app whose routes replay, through pg with the service's pool
// settings, the SQL the service sends for each scenario (captured from the real services): for reads
// the same statements, for writes the same transaction with the request's values and fresh ids. No
// validation, authentication, rate limit, logging or mapping. In `prepared` mode it prepares exactly the
// statements the service prepares (pg's query config with a `name`), which is the fair comparison; in
// `unprepared` mode it sends every statement unprepared, as a plain pg query does.
// Run as a child: `baseline-server.ts PLAN.json prepared|unprepared`.
import http from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import Router from '@koa/router';
import type pg from 'pg';
import { connectDatabase } from '../../src/database/connect.js';
import type { Statement, StatementPlan } from './capture.js';
import { bindWrite, type WriteBody, type WritePlan } from './write-plan.js';

/** What the baseline serves: per scenario, the captured statements and the id parameter to replace. */
export interface BaselinePlan {
  databaseUrl: string;
  poolSize: number;
  routes: Record<string, { plan: StatementPlan; idParameter?: string }>;
  /** Per write scenario, per case, the transaction to run. */
  writes: Record<string, Record<string, WritePlan>>;
}

/** How a floor sends its statements: prepared where the service prepares them, or all unprepared. */
export type FloorStatements = 'prepared' | 'unprepared';

const TRANSACTION_START = /^(begin|start transaction)\b/i;
const TRANSACTION_END = /^(commit|rollback)\b/i;

/** Sends one statement: by its name when it has one and `prepare` is set, else unprepared. */
function send(
  target: pg.Pool | pg.PoolClient,
  statement: { sql: string; name?: string },
  values: unknown[],
  prepare: boolean,
): Promise<pg.QueryResult> {
  return prepare && statement.name !== undefined
    ? target.query({ name: statement.name, text: statement.sql, values })
    : target.query(statement.sql, values);
}

/** Runs a plan's steps in order (a transaction on one client, concurrent steps in parallel); returns each statement's rows. */
async function replay(
  pool: pg.Pool,
  plan: StatementPlan,
  bind: (value: unknown) => unknown,
  prepare: boolean,
): Promise<unknown[][]> {
  const results: unknown[][] = [];
  const run = async (target: pg.Pool | pg.PoolClient, statement: Statement) => {
    const result = await send(target, statement, statement.parameters.map(bind), prepare);
    return result.rows as unknown[];
  };
  let client: pg.PoolClient | null = null;
  try {
    for (const step of plan) {
      const first = step[0]!;
      if (!client && TRANSACTION_START.test(first.sql)) {
        client = await pool.connect();
        await run(client, first);
      } else if (client) {
        const rows = await run(client, first);
        if (TRANSACTION_END.test(first.sql)) {
          client.release();
          client = null;
        } else results.push(rows);
      } else {
        results.push(...(await Promise.all(step.map((statement) => run(pool, statement)))));
      }
    }
  } catch (error) {
    if (client) client.release(true);
    throw error;
  }
  return results;
}

/** Runs a write plan's statements one after the other on one client (its begin and commit included). */
async function runWrite(
  pool: pg.Pool,
  plan: WritePlan,
  body: WriteBody,
  unique: () => string,
  prepare: boolean,
): Promise<unknown[][]> {
  const parameters = bindWrite(plan, body, unique);
  const client = await pool.connect();
  try {
    const results: unknown[][] = [];
    for (const [i, statement] of plan.entries()) {
      const result = await send(client, statement, parameters[i]!, prepare);
      if (result.rows.length > 0) results.push(result.rows as unknown[]);
    }
    client.release();
    return results;
  } catch (error) {
    client.release(true);
    throw error;
  }
}

/** The raw body of a request, parsed as JSON. */
async function readJson(request: http.IncomingMessage): Promise<WriteBody> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as WriteBody;
}

async function main(): Promise<void> {
  const plan = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as BaselinePlan;
  const mode = process.argv[3] as FloorStatements | undefined;
  if (mode !== 'prepared' && mode !== 'unprepared') throw new Error('the second argument is prepared or unprepared');
  const prepare = mode === 'prepared';
  const { pool } = connectDatabase(plan.databaseUrl, { poolSize: plan.poolSize });
  const router = new Router();
  const serve = (name: string, id: string | undefined) => {
    const route = plan.routes[name];
    if (!route) return undefined;
    const bind = (value: unknown) => (id !== undefined && value === route.idParameter ? id : value);
    return replay(pool, route.plan, bind, prepare);
  };
  router.get('/:scenario{/:id}', async (ctx) => {
    const data = await serve(ctx.params.scenario!, ctx.params.id);
    if (data === undefined) ctx.status = 404;
    else ctx.body = { data };
  });
  let written = 0;
  const started = String(Date.now() % 1_000_000).padStart(6, '0');
  const unique = () => `${started}${String(written++ % 1_000_000).padStart(6, '0')}`;
  router.post('/:scenario/:case', async (ctx) => {
    const write = plan.writes[ctx.params.scenario!]?.[ctx.params.case!];
    if (!write) {
      ctx.status = 404;
      return;
    }
    ctx.status = 201;
    ctx.body = { data: await runWrite(pool, write, await readJson(ctx.req), unique, prepare) };
  });
  const app = new Koa();
  app.use(router.routes());
  const handle = app.callback();
  // Koa answers each request's failure itself (ctx.onerror), so the promise it returns never rejects.
  const server = http.createServer((request, response) => void handle(request, response));
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.stdout.write(`baseline (${mode}) listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  process.on('SIGTERM', () => {
    server.close();
    server.closeAllConnections();
    void pool.end().finally(() => process.exit(0));
  });
}

main().catch((error: unknown) => {
  console.error('baseline failed to start:', error);
  process.exit(1);
});
