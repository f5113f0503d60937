// Tells a database that cannot be reached or cannot answer now apart from any other failure, so the
// service reports it as what it is (503 service_unavailable) and its workers back off.
import { QUERY_READ_TIMEOUT } from './connect.js';

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
 * PostgreSQL error classes and codes meaning "not now": connection exceptions (08), insufficient
 * resources (53), operator intervention such as a shutdown or a canceled statement (57), a lock not
 * available (55P03), and serialization failures and deadlocks (40001, 40P01), which a retry resolves.
 */
function isTransientSqlState(code: string): boolean {
  return (
    code.startsWith('08') ||
    code.startsWith('53') ||
    code.startsWith('57') ||
    code === '55P03' ||
    code === '40001' ||
    code === '40P01'
  );
}

/** Messages of pg and pg-pool for a connection that could not be had or was lost. */
const CONNECTION_MESSAGES = [
  QUERY_READ_TIMEOUT,
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'connection timeout',
  'Client has encountered a connection error and is not queryable',
  'Connection terminated unexpectedly',
];

/** Whether `error` (or one of its causes) says the database is unreachable or cannot answer now. Never throws. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth += 1) {
    const { code, message, cause } = current as { code?: unknown; message?: unknown; cause?: unknown };
    if (
      typeof code === 'string' &&
      (NETWORK_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && isTransientSqlState(code)))
    ) {
      return true;
    }
    if (typeof message === 'string' && CONNECTION_MESSAGES.some((text) => message.includes(text))) return true;
    current = cause;
  }
  return false;
}
