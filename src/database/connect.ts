// Opens the Kysely/pg connection pool: row types mapped to JavaScript numbers, and every wait bounded
// (for a connection, for a statement on the server, for an answer on the client).
import pg from 'pg';
import { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { PgDialect } from './pg-dialect.js';

export type Db = Kysely<Database>;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

// bigint and numeric columns hold paise, counts and epoch milliseconds: all far below 2^53.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format) as (value: string) => unknown;
  },
};

/** Pool settings; every timeout is in milliseconds and 0 turns it off. */
export interface ConnectOptions {
  poolSize: number;
  /** How long to wait for a free or new connection before the query fails (default 3 s). */
  connectTimeoutMs?: number;
  /** How long the server may run one statement (default 5 s). */
  statementTimeoutMs?: number;
  /** How long the client waits for a query's answer before giving the connection up (default 6 s). */
  queryTimeoutMs?: number;
  /** How long a session may sit idle inside a transaction before the server ends it (default 30 s). */
  idleInTransactionTimeoutMs?: number;
  /** How long a statement may wait for a lock (default: as long as the statement may run). */
  lockTimeoutMs?: number;
  /** Whether statements registered by prepareQuery run as server-side prepared statements (default false). */
  namedStatements?: boolean;
  /** After how many seconds a connection is closed once it is next idle, and replaced (default 0: never). */
  maxConnectionAgeS?: number;
}

/** Creates a pool-backed Kysely instance; connection errors surface on first query. */
export function connectDatabase(url: string, options: ConnectOptions): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3_000,
    statement_timeout: options.statementTimeoutMs ?? 5_000,
    idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? 30_000,
    ...(options.lockTimeoutMs !== undefined ? { lock_timeout: options.lockTimeoutMs } : {}),
    keepAlive: true,
    maxLifetimeSeconds: options.maxConnectionAgeS ?? 0,
    types,
  });
  // An idle client losing its server connection must not crash the process (the pool then drops it).
  pool.on('error', () => undefined);
  // Nor a checked-out one between two queries (a transaction awaiting other work): the pool removes its
  // idle listener while a client is out, and an 'error' event with no listener kills the process.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const dialect = new PgDialect({
    pool,
    poolSize: options.poolSize,
    queryTimeoutMs: options.queryTimeoutMs ?? 6_000,
    namedStatements: options.namedStatements ?? false,
  });
  return { db: new Kysely<Database>({ dialect }), pool };
}
