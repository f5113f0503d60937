// Opens the Kysely/pg connection pool with row types mapped to JavaScript numbers.
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../../db/schema.js';

export type Db = Kysely<Database>;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

// bigint and numeric columns hold paise, counts and epoch seconds: all far below 2^53.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

export interface ConnectOptions {
  poolSize: number;
  /** Milliseconds to wait for a free or new connection before failing the query. */
  connectionTimeoutMs?: number;
  statementTimeoutMs?: number;
}

/** Creates a pool-backed Kysely instance; connection errors surface on first query. */
export function connectDatabase(url: string, options: ConnectOptions): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    types,
  });
  // An idle client losing its server connection must not crash the process.
  pool.on('error', () => undefined);
  // Nor a checked-out one between two queries (a transaction awaiting other work, the webhook lock
  // session holding its locks): the pool removes its idle listener while a client is out, and an
  // 'error' event with no listener kills the process. The client's next query fails instead, and the
  // pool discards the client when it comes back.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool };
}
