// A Kysely dialect for PostgreSQL over a pg pool, built from Kysely's public parts (its adapter, query
// compiler and introspector) with a driver of our own: its connections name registered statements and
// bound every query (./pg-connection.ts), and it reports a pool that cannot give a connection as a
// database fault of our own type.
import pg from 'pg';
import {
  AbortedTransactionError,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type TransactionSettings,
} from 'kysely';
import type { AnySchemaDb } from './any-schema.js';
import { ConnectionUnavailableError } from './driver-errors.js';
import { PgConnection, type PgConnectionOptions } from './pg-connection.js';

/** What the driver needs: the pool, its size, and how its connections run queries. */
export interface PgDriverOptions extends PgConnectionOptions {
  pool: pg.Pool;
  poolSize: number;
}

/** Kysely's PostgreSQL dialect with the service's driver. */
export class PgDialect implements Dialect {
  constructor(private readonly options: PgDriverOptions) {}

  /** Creates the driver over the configured pool. */
  createDriver(): Driver {
    return new PgDriver(this.options);
  }

  /** Kysely's PostgreSQL query compiler. */
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }

  /** Kysely's PostgreSQL adapter. */
  createAdapter() {
    return new PostgresAdapter();
  }

  /** Kysely's PostgreSQL introspector. */
  createIntrospector(db: AnySchemaDb) {
    return new PostgresIntrospector(db);
  }
}

/** Hands out pooled connections to Kysely and runs its transactions on them. */
class PgDriver implements Driver {
  /** One connection wrapper per pg client, for the client's life (it holds the client's state). */
  readonly #connections = new WeakMap<pg.PoolClient, PgConnection>();

  constructor(private readonly options: PgDriverOptions) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const { pool, poolSize } = this.options;
    // pg-pool opens a new connection unless it is full; when full, the wait is for one to come free.
    const waitsForFree = pool.totalCount >= poolSize && pool.idleCount === 0;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      // The server answered (authentication refused, starting up, too many clients): its SQLSTATE says what.
      if (error instanceof pg.DatabaseError) throw error;
      throw new ConnectionUnavailableError(waitsForFree ? 'busy' : 'unreachable', { cause: error });
    }
    let connection = this.#connections.get(client);
    if (!connection) {
      connection = new PgConnection(client, this.options);
      this.#connections.set(client, connection);
    }
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const { isolationLevel, accessMode } = settings;
    const mode = [isolationLevel && `isolation level ${isolationLevel}`, accessMode].filter(Boolean).join(' ');
    await pgConnection(connection).control(mode ? `start transaction ${mode}` : 'begin');
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // PostgreSQL answers COMMIT with ROLLBACK when an earlier error left the transaction aborted.
    if ((await pgConnection(connection).control('commit')) === 'ROLLBACK') throw new AbortedTransactionError();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await pgConnection(connection).rollback();
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    pgConnection(connection).release();
    return Promise.resolve();
  }

  async destroy(): Promise<void> {
    await this.options.pool.end();
  }
}

/** The connection this driver handed out. */
function pgConnection(connection: DatabaseConnection): PgConnection {
  if (!(connection instanceof PgConnection)) throw new TypeError('not a connection of this driver');
  return connection;
}
