// One pooled pg connection as Kysely sees it: registered statements run by name (pg's query config
// `{ name, text, values }`), every query has a client-side deadline, and a connection that broke or
// left a query unanswered is marked lost so it goes back to the pool to be destroyed, never reused.
import pg from 'pg';
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';
import { withDeadline } from './deadline.js';
import { ConnectionLostError, QueryTimeoutError, StaleStatementError } from './driver-errors.js';
import { namedStatementOf } from './named-statements.js';

/** How a connection runs its queries. */
export interface PgConnectionOptions {
  /** How long a query may go unanswered before the connection is given up (0: no bound). */
  queryTimeoutMs: number;
  /** Whether statements registered by prepareQuery run by name. */
  namedStatements: boolean;
}

/** Commands whose row count Kysely reports as the number of affected rows. */
const ROW_CHANGING_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

/**
 * Whether `error` is PostgreSQL refusing a prepared statement whose result columns changed: SQLSTATE
 * 0A000 (feature not supported) raised by the plan cache's revalidation.
 */
function isStalePlan(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code === '0A000' && error.routine === 'RevalidateCachedQuery';
}

/** A pooled pg client wrapped for Kysely; one per client, kept for the client's life. */
export class PgConnection implements DatabaseConnection {
  /** Why this connection must not be reused, once it must not. */
  #lost: ConnectionLostError | null = null;
  /** Named statements the server refused here as stale: on this connection they run unnamed. */
  readonly #staleStatements = new Set<string>();

  constructor(
    private readonly client: pg.PoolClient,
    private readonly options: PgConnectionOptions,
  ) {
    // pg reports a failed or closed socket with an 'error' event (the pool's idle listener is off while
    // the client is checked out): remember it, and keep it from crashing the process.
    client.on('error', (error) => this.#markLost(error));
    client.on('end', () => this.#markLost());
  }

  /** Runs `query` and returns its rows and, for row-changing commands, how many rows changed. */
  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { command, rowCount, rows } = await this.#run<R>(query.sql, query.parameters);
    return {
      numAffectedRows: ROW_CHANGING_COMMANDS.has(command) && rowCount !== null ? BigInt(rowCount) : undefined,
      rows: rows ?? [],
    };
  }

  /** Runs a transaction control statement (begin, commit) and returns its command tag. */
  async control(sql: string): Promise<string> {
    return (await this.#run(sql, [])).command;
  }

  /**
   * Rolls the open transaction back. On a lost connection there is nothing to send: the pool destroys
   * it, and the server rolls back when it closes. A failed rollback leaves the transaction in an unknown
   * state, so the connection is not reused either.
   */
  async rollback(): Promise<void> {
    if (this.#lost) return;
    try {
      await this.#run('rollback', []);
    } catch (error) {
      this.#markLost(error);
      throw error;
    }
  }

  /** Streaming needs a cursor (pg-cursor), which this service does not install. */
  streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming query results is not supported: the service has no cursor support for pg');
  }

  /** Gives the client back to the pool; a lost one is destroyed there (pg-pool's `release(err)`). */
  release(): void {
    this.client.release(this.#lost ?? undefined);
  }

  async #run<R>(text: string, parameters: readonly unknown[]): Promise<pg.QueryResult<R & pg.QueryResultRow>> {
    if (this.#lost) throw new ConnectionLostError({ cause: this.#lost });
    const values = [...parameters];
    const name = this.options.namedStatements ? namedStatementOf(text) : undefined;
    const named = name !== undefined && !this.#staleStatements.has(name) ? name : undefined;
    const pending = named
      ? this.client.query<R & pg.QueryResultRow>({ name: named, text, values })
      : this.client.query<R & pg.QueryResultRow>(text, values);
    try {
      return await withDeadline(
        pending,
        this.options.queryTimeoutMs,
        () => new QueryTimeoutError(this.options.queryTimeoutMs),
      );
    } catch (error) {
      if (error instanceof QueryTimeoutError) {
        // The answer may still come, or never: a later query here would wait behind it.
        this.#markLost(error);
        throw error;
      }
      if (named && isStalePlan(error)) {
        this.#staleStatements.add(named);
        throw new StaleStatementError(named, { cause: error });
      }
      // The server's own errors carry a SQLSTATE; anything else on a broken socket is the socket's failure.
      if (this.#lost && !(error instanceof pg.DatabaseError)) throw new ConnectionLostError({ cause: error });
      throw error;
    }
  }

  #markLost(cause?: unknown): void {
    this.#lost ??= new ConnectionLostError(cause === undefined ? undefined : { cause });
  }
}
