// Opens the Kysely/pg connection pool: row types mapped to JavaScript numbers, and every wait bounded
// (for a connection, for a statement on the server, for an answer on the client).
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../../db/schema.js';
import { isStalePreparedStatement, namedStatementOf } from './named-statements.js';

export type Db = Kysely<Database>;

const INT8_OID = 20;
const NUMERIC_OID = 1700;

// bigint and numeric columns hold paise, counts and epoch milliseconds: all far below 2^53.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID || oid === NUMERIC_OID) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/** The message pg gives a query whose answer did not come within query_timeout. */
export const QUERY_READ_TIMEOUT = 'Query read timeout';

/**
 * A pg client that gives its connection up when a query outlasts the client-side timeout: the server
 * may be silent, and a later query on the same connection would wait behind the lost one. The broken
 * connection is then no longer queryable, so the pool discards it when it comes back.
 */
class BoundedClient extends pg.Client {
  /** Whether registered statements run by name (see named-statements.ts). */
  protected readonly namesStatements: boolean = false;
  /**
   * Named statements the server refused on this connection because a migration changed their result
   * columns: here they run unnamed from then on (the connection stays usable, in a transaction too).
   */
  private readonly staleStatements = new Set<string>();

  override query(...args: unknown[]): never {
    const [text, values] = args;
    let name = this.namesStatements && typeof text === 'string' ? namedStatementOf(text) : undefined;
    if (name && (this.staleStatements.has(name) || args.length > 2 || !(values === undefined || Array.isArray(values))))
      name = undefined;
    if (name) args = [{ name, text, values }];
    const result = (super.query as (...a: unknown[]) => unknown)(...args);
    if (result instanceof Promise) {
      return result.catch((error: unknown) => {
        if (error instanceof Error && error.message === QUERY_READ_TIMEOUT) {
          (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
        }
        if (name && isStalePreparedStatement(error)) this.staleStatements.add(name);
        throw error;
      }) as never;
    }
    return result as never;
  }
}

/** A BoundedClient that runs registered statements by name. */
class NamingClient extends BoundedClient {
  protected override readonly namesStatements = true;
}

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
}

/** Creates a pool-backed Kysely instance; connection errors surface on first query. */
export function connectDatabase(url: string, options: ConnectOptions): { db: Db; pool: pg.Pool } {
  const pool = new pg.Pool({
    connectionString: url,
    Client: (options.namedStatements ? NamingClient : BoundedClient) as unknown as typeof pg.Client,
    max: options.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3_000,
    statement_timeout: options.statementTimeoutMs ?? 5_000,
    query_timeout: options.queryTimeoutMs ?? 6_000,
    idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs ?? 30_000,
    ...(options.lockTimeoutMs !== undefined ? { lock_timeout: options.lockTimeoutMs } : {}),
    keepAlive: true,
    types,
  });
  // An idle client losing its server connection must not crash the process.
  pool.on('error', () => undefined);
  // Nor a checked-out one between two queries (a transaction awaiting other work): the pool removes its
  // idle listener while a client is out, and an 'error' event with no listener kills the process. The
  // client's next query fails instead, and the pool discards the client when it comes back.
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, pool };
}
