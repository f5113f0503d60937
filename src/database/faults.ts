// Tells a database that cannot be reached or cannot answer now apart from any other failure, so the
// service reports it as what it is (503 service_unavailable) and its workers back off.
import { DatabaseFaultError, type DatabaseFault } from './driver-errors.js';

export type { DatabaseFault } from './driver-errors.js';

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
 * (53) and a server shutting down or starting (57P01-57P03) mean unreachable; a server that has no
 * connection left for one more client (53300: it is up, and connections already open still work), a
 * canceled statement (57014, the statement timeout), a lock not available (55P03), serialization
 * failures and deadlocks (40001, 40P01) mean busy, which a retry resolves.
 */
function faultOfSqlState(code: string): DatabaseFault | null {
  if (code === '53300') return 'busy';
  if (code.startsWith('08') || code.startsWith('53') || /^57P0[1-3]$/.test(code)) return 'unreachable';
  if (code === '57014' || code === '55P03' || code === '40001' || code === '40P01') return 'busy';
  return null;
}

/**
 * Whether the error is PostgreSQL refusing the session because the database takes no connections now
 * (`ALTER DATABASE … ALLOW_CONNECTIONS false`): SQLSTATE 55000 at severity FATAL. At any other severity
 * 55000 is a statement's own mistake, and other session-ending errors (a wrong password, an unknown
 * database) are configuration errors, reported as such rather than as an outage. (The severity comes
 * in the server's language; it reads FATAL in English and in most translations.)
 */
function refusesConnections(code: string, severity: unknown): boolean {
  return code === '55000' && severity === 'FATAL';
}

/**
 * The database fault `error` (or one of its causes) reports, or null for any other failure: the
 * driver's own fault errors (a query timeout, a lost connection, no connection to be had, a stale
 * named statement), a network error code, a PostgreSQL SQLSTATE, or a database that takes no
 * connections now. Never throws.
 */
export function databaseFault(error: unknown): DatabaseFault | null {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    if (current instanceof DatabaseFaultError) return current.fault;
    const { code, cause, severity } = current as { code?: unknown; cause?: unknown; severity?: unknown };
    if (typeof code === 'string') {
      if (NETWORK_CODES.has(code) || refusesConnections(code, severity)) return 'unreachable';
      const fault = /^[0-9A-Z]{5}$/.test(code) ? faultOfSqlState(code) : null;
      if (fault) return fault;
    }
    current = cause;
  }
  return null;
}

/** Whether `error` says the database is unreachable or cannot answer now. Never throws. */
export function isDatabaseUnavailable(error: unknown): boolean {
  return databaseFault(error) !== null;
}
