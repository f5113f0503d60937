// Tells a database that cannot be reached or cannot answer now apart from any other failure, so the
// service reports it as what it is (503 service_unavailable) and its workers back off.
import { QUERY_READ_TIMEOUT } from './connect.js';
import { isStalePreparedStatement } from './named-statements.js';

/** What kind of database fault an error is: the server cannot be reached, or it is too busy now. */
export type DatabaseFault = 'unreachable' | 'busy';

/** Node network error codes of a connection that failed or was cut. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * The fault a PostgreSQL error code stands for: connection exceptions (08), insufficient resources
 * (53) and a server shutting down or starting (57P01-57P03) mean unreachable; a canceled statement
 * (57014, the statement timeout), a lock not available (55P03), serialization failures and deadlocks
 * (40001, 40P01) mean busy, which a retry resolves.
 */
function faultOfSqlState(code: string): DatabaseFault | null {
  if (code.startsWith('08') || code.startsWith('53') || /^57P0[1-3]$/.test(code)) return 'unreachable';
  if (code === '57014' || code === '55P03' || code === '40001' || code === '40P01') return 'busy';
  return null;
}

/** Messages of pg and pg-pool for a connection that was lost or never made. */
const UNREACHABLE_MESSAGES = [
  QUERY_READ_TIMEOUT,
  'Connection terminated',
  'connection timeout',
  'Client has encountered a connection error and is not queryable',
];

/** The message of pg-pool when no connection came free in time: the pool is busy, the server may be fine. */
const POOL_BUSY_MESSAGE = 'timeout exceeded when trying to connect';

/** The database fault `error` (or one of its causes) reports, or null for any other failure. Never throws. */
export function databaseFault(error: unknown): DatabaseFault | null {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    // A named statement gone stale inside a transaction: the retry runs it unnamed (see connect.ts) and succeeds.
    if (isStalePreparedStatement(current)) return 'busy';
    if (typeof code === 'string') {
      if (NETWORK_CODES.has(code)) return 'unreachable';
      const fault = /^[0-9A-Z]{5}$/.test(code) ? faultOfSqlState(code) : null;
      if (fault) return fault;
    }
    if (typeof message === 'string') {
      if (message.includes(POOL_BUSY_MESSAGE)) return 'busy';
      if (UNREACHABLE_MESSAGES.some((text) => message.includes(text))) return 'unreachable';
    }
    current = cause;
  }
  return null;
}

/** Whether `error` says the database is unreachable or cannot answer now. Never throws. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return databaseFault(error) !== null;
}
