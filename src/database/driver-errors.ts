// The errors the service's database driver raises itself, each saying which kind of database fault it
// is, so nothing downstream has to read pg's message text.

/** What kind of database fault an error is: the server cannot be reached, or it is too busy now. */
export type DatabaseFault = 'unreachable' | 'busy';

/** `summary`, followed by what the underlying failure said, for people reading logs and the CLI. */
function withCause(summary: string, options?: ErrorOptions): string {
  const cause = options?.cause;
  if (!(cause instanceof Error)) return summary;
  const { code } = cause as { code?: unknown };
  const detail = cause.message || (typeof code === 'string' || typeof code === 'number' ? String(code) : cause.name);
  return `${summary}: ${detail}`;
}

/** A failure the driver recognised as a database fault; `fault` says which kind. */
export abstract class DatabaseFaultError extends Error {
  abstract readonly fault: DatabaseFault;
}

/** A query got no answer within the client-side timeout; its connection is never used again. */
export class QueryTimeoutError extends DatabaseFaultError {
  override readonly name = 'QueryTimeoutError';
  readonly fault = 'unreachable';
  constructor(timeoutMs: number) {
    super(`the database did not answer a query within ${timeoutMs} ms`);
  }
}

/** The connection a query was to run on broke (its socket failed or closed, or a query on it timed out). */
export class ConnectionLostError extends DatabaseFaultError {
  override readonly name = 'ConnectionLostError';
  readonly fault = 'unreachable';
  constructor(options?: ErrorOptions) {
    super(withCause('the database connection was lost', options), options);
  }
}

/**
 * No connection could be had from the pool: 'busy' when every connection was in use and none came free
 * in time, 'unreachable' when a new connection to the server failed.
 */
export class ConnectionUnavailableError extends DatabaseFaultError {
  override readonly name = 'ConnectionUnavailableError';
  constructor(
    readonly fault: DatabaseFault,
    options?: ErrorOptions,
  ) {
    super(fault === 'busy' ? 'no database connection came free in time' : 'could not connect to the database', options);
  }
}

/**
 * PostgreSQL refused a named statement because a migration changed its result columns since it was
 * prepared on this connection; the connection runs it unnamed from now on, so a retry outside a
 * transaction succeeds (inside one, the transaction is lost: busy, retry the request).
 */
export class StaleStatementError extends DatabaseFaultError {
  override readonly name = 'StaleStatementError';
  readonly fault = 'busy';
  constructor(statement: string, options?: ErrorOptions) {
    super(`prepared statement ${statement} went stale: its result columns changed`, options);
  }
}
