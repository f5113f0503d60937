// The retention job: once every RETENTION_INTERVAL_MS across the worker processes (a periodic job of
// the job engine) one of them removes history past its keeping period, through each feature's own pruning: finished webhook deliveries and their events after
// DELIVERY_RETENTION_DAYS (the last 100 attempts of each endpoint and their deliveries always stay),
// call timeline entries after TIMELINE_RETENTION_DAYS, Idempotency-Key records once they have expired,
// rate-limit buckets no longer counted, audit log entries and the records of ended CSV imports after
// AUDIT_RETENTION_DAYS, and dashboard sessions, links and sign-in failures past their use. A run and the
// operator's `retention run` never overlap (an advisory lock).
import { sql } from 'kysely';
import type { AppDeps } from '../app-deps.js';
import type { Db } from '../database/connect.js';
import { IDEMPOTENCY_WINDOW_MS } from '../calls/policy.js';
import { pruneCallHistory } from '../calls/service.js';
import { pruneRateLimitBuckets } from '../orgs/rate-limiter.js';
import { pruneAuthFailureAllowances } from '../orgs/authenticator.js';
import { pruneDeliveryHistory } from '../webhooks/service.js';
import { pruneAudit } from '../audit/service.js';
import { pruneContactImports } from '../contacts/service.js';
import { pruneDashboardState } from '../members/sessions.js';

/** Rows one delete statement removes at the most. */
const BATCH_SIZE = 5_000;
const DAY_MS = 86_400_000;

/** The tables the job removes rows from. */
const RETENTION_TABLES = [
  'webhook_deliveries',
  'events',
  'call_timeline',
  'call_idempotency_keys',
  'provider_events',
  'rate_limit_buckets',
  'auth_failure_allowances',
  'audit_log',
  'contact_imports',
  'dashboard_state',
] as const;

/** Rows removed by one run, by table. */
export type RetentionReport = Record<(typeof RETENTION_TABLES)[number], number>;

/** Thrown inside a dry run's transaction so that everything it deleted is rolled back. */
class DryRunRollback extends Error {
  constructor(readonly report: RetentionReport) {
    super('dry run');
  }
}

/**
 * Runs the retention rules once, unless another process is running them (then returns null). With
 * `dryRun`, the deletions run in a transaction that is rolled back: the report says what a run would
 * remove now, and nothing is removed. Database errors propagate.
 */
export async function runRetention(
  deps: Pick<AppDeps, 'db' | 'clock' | 'config'>,
  options: { dryRun?: boolean } = {},
): Promise<RetentionReport | null> {
  const { db, clock, config } = deps;
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ locked: boolean }>`
      SELECT pg_try_advisory_lock(hashtextextended('retention', 0)) AS locked`.execute(conn);
    if (!rows[0]?.locked) return null;
    try {
      if (!options.dryRun) return await prune(conn, clock.now().getTime(), config);
      try {
        await conn.transaction().execute(async (trx) => {
          throw new DryRunRollback(await prune(trx, clock.now().getTime(), config));
        });
      } catch (error) {
        if (error instanceof DryRunRollback) return error.report;
        throw error;
      }
      return null;
    } finally {
      await sql`SELECT pg_advisory_unlock(hashtextextended('retention', 0))`.execute(conn);
    }
  });
}

/** Applies every retention rule on `conn` as of `now`; returns the rows removed by table. */
async function prune(conn: Db, now: number, config: AppDeps['config']): Promise<RetentionReport> {
  return {
    ...(await pruneDeliveryHistory(conn, new Date(now - config.deliveryRetentionDays * DAY_MS), BATCH_SIZE)),
    ...(await pruneCallHistory(
      conn,
      {
        timelineBefore: new Date(now - config.timelineRetentionDays * DAY_MS),
        keysBefore: new Date(now - IDEMPOTENCY_WINDOW_MS),
      },
      BATCH_SIZE,
    )),
    rate_limit_buckets: await pruneRateLimitBuckets(conn, now),
    auth_failure_allowances: await pruneAuthFailureAllowances(conn, now),
    audit_log: await pruneAudit(conn, new Date(now - config.auditRetentionDays * DAY_MS), BATCH_SIZE),
    // An import's record goes with the audit entry that names it.
    contact_imports: await pruneContactImports(conn, new Date(now - config.auditRetentionDays * DAY_MS), BATCH_SIZE),
    dashboard_state: await pruneDashboardState(
      conn,
      { idleMs: config.dashboardSessionIdleMs, absoluteMs: config.dashboardSessionAbsoluteMs },
      new Date(now),
    ),
  };
}

/**
 * Schedules the retention job on the job engine (the worker role); resolves once it is registered.
 * Never rejects: a failed run is logged, and the next interval's run does its work.
 */
export function scheduleRetention(deps: AppDeps): Promise<void> {
  // Every table's counter exists from the start, so a rate over it is defined before the first removal.
  for (const table of RETENTION_TABLES) deps.metrics.retentionDeletedRows.inc({ table }, 0);
  return deps.jobs.every('maintenance.retention', deps.config.retentionIntervalMs, async () => {
    const report = await runRetention(deps);
    if (!report) {
      deps.logger.info('retention skipped: the operator is running it');
      return;
    }
    deps.metrics.retentionLastSuccess.set(deps.clock.now().getTime() / 1000);
    for (const [table, count] of Object.entries(report)) deps.metrics.retentionDeletedRows.inc({ table }, count);
    const removed = Object.values(report).reduce((sum, count) => sum + count, 0);
    deps.logger[removed > 0 ? 'info' : 'debug']({ removed: report }, 'retention removed old history');
  });
}
