// The service's Prometheus metrics (prom-client), one registry per process, every series named with
// the `voice_call_` prefix: HTTP requests by operation and status, requests in flight, rate-limit
// refusals, webhook attempts by outcome, abandoned deliveries, the webhook queue's depth and age, the
// database pool, call status changes, voice-provider placements, reports and lookups, rows the retention
// job removed, background jobs completed, failed and retried and their queues, campaign placements by
// outcome, CSV contact imports by outcome, and Node's own process metrics
// (under their usual names). A process exports only the series of the parts it runs: an api process
// has no webhook queue, a worker no HTTP requests.
import { readFileSync } from 'node:fs';
import type pg from 'pg';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../database/connect.js';
import { sql } from 'kysely';
import { projectFile } from '../project-files.js';
import type { components } from '../../generated/openapi.js';
import { CALL_STATUSES, canTransition } from '../calls/status.js';

/** The version of this build, from package.json. */
const VERSION = (JSON.parse(readFileSync(projectFile('package.json'), 'utf8')) as { version: string }).version;

/** What starts every series the service defines (Node's process metrics keep their usual names). */
export const METRIC_PREFIX = 'voice_call_';

/** Which parts a process runs, and so which series it exports: the API's, the background work's, or both. */
export type MetricsRole = 'api' | 'worker' | 'all';

/** Every metric a process records, on its own registry. */
export interface Metrics {
  /** What the process exports: the shared series and those of its role. */
  registry: Registry;
  httpRequestDuration: Histogram<'operation' | 'method' | 'status'>;
  httpRequestsInFlight: Gauge;
  rateLimitRejections: Counter<'reason'>;
  webhookAttempts: Counter<'outcome'>;
  webhookDeliveriesAbandoned: Counter;
  callStatusChanges: Counter<'from' | 'to'>;
  retentionDeletedRows: Counter<'table'>;
  retentionLastSuccess: Gauge;
  jobsCompleted: Counter<'job'>;
  jobsFailed: Counter<'job'>;
  jobsRetried: Counter<'job'>;
  eventToFirstAttempt: Histogram;
  contactImports: Counter<'outcome'>;
  /** Campaign contacts a dispatch pass claimed, by outcome: placed, refused, unknown, suppressed, or given back (by halt). */
  campaignPlacements: Counter<'outcome'>;
  /** Placements by provider and outcome: placed, refused, unknown (no answer in time), recovered, voided. */
  providerPlacements: Counter<'provider' | 'outcome'>;
  providerPlacementSeconds: Histogram<'provider'>;
  /** Inbound provider reports by result: accepted, duplicate, held, unknown_call, refused_signature. */
  providerWebhooks: Counter<'provider' | 'result'>;
  /** Reconciliation lookups by provider and outcome (found, not_found, error), and those made to wait. */
  providerLookups: Counter<'provider' | 'outcome'>;
  providerLookupsThrottled: Counter<'provider'>;
}

/** Why a request was refused with 429; each reason's counter exists (at 0) from the start. */
const REJECTION_REASONS = ['org_rate_limit', 'auth_failures', 'test_sends', 'redeliveries'] as const;

/** Why a request was refused with 429. */
export type RejectionReason = (typeof REJECTION_REASONS)[number];

/** Every outcome of a webhook attempt (the type makes sure none of the spec's failure kinds is missing). */
const ATTEMPT_OUTCOMES = Object.keys({
  success: true,
  http_status: true,
  timeout: true,
  tls: true,
  connection_refused: true,
  connection_reset: true,
  dns: true,
  guard: true,
  invalid_payload: true,
  other: true,
} satisfies Record<components['schemas']['WebhookFailureKind'] | 'success', true>);

/** Every outcome of a campaign contact a dispatch pass claimed. */
const CAMPAIGN_PLACEMENT_OUTCOMES = [
  'placed',
  'refused',
  'unknown',
  'suppressed',
  'call_cap',
  'insufficient_credits',
  'cannot_place',
] as const;

/** Every move a call can make: from "none" to queued (a new call), and each one the status chain allows. */
const CALL_MOVES = [
  { from: 'none', to: 'queued' },
  ...CALL_STATUSES.flatMap((from) => CALL_STATUSES.filter((to) => canTransition(from, to)).map((to) => ({ from, to }))),
];

/** Buckets for an event's wait until its first attempt, in seconds: 10 ms to 10 minutes. */
const FIRST_ATTEMPT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 600];

/** Latency buckets for API requests, in seconds: 1 ms to 10 s. */
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Creates the process's metrics: those every role shares, the API's and the background work's, each
 * on a registry of its own; the process exports the shared one merged with those of `role`. Never throws.
 */
export function createMetrics(role: MetricsRole): Metrics {
  const shared = new Registry();
  const api = new Registry();
  const worker = new Registry();
  collectDefaultMetrics({ register: shared });
  new Gauge({
    registers: [shared],
    name: `${METRIC_PREFIX}build_info`,
    help: 'Always 1; its labels say which version of the service runs on which Node.',
    labelNames: ['version', 'node'],
    aggregator: 'first',
  }).set({ version: VERSION, node: process.versions.node }, 1);
  const webhookAttempts = new Counter({
    registers: [shared],
    name: `${METRIC_PREFIX}webhook_attempts_total`,
    help: 'Webhook delivery attempts (deliveries, and test sends in the API) by outcome: success, or the failure kind (http_status, timeout, tls, ...).',
    labelNames: ['outcome'],
  });
  for (const outcome of ATTEMPT_OUTCOMES) webhookAttempts.inc({ outcome }, 0);
  const callStatusChanges = new Counter({
    registers: [shared],
    name: `${METRIC_PREFIX}call_status_changes_total`,
    help: 'Calls moving from one status to another (from is "none" for a new call).',
    labelNames: ['from', 'to'],
  });
  for (const move of CALL_MOVES) callStatusChanges.inc(move, 0);
  const recorders = {
    webhookAttempts,
    callStatusChanges,
    httpRequestDuration: new Histogram({
      registers: [api],
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'API requests by operation, method and HTTP status, from arrival to the last byte handed to Node.',
      labelNames: ['operation', 'method', 'status'],
      buckets: REQUEST_BUCKETS,
    }),
    httpRequestsInFlight: new Gauge({
      registers: [api],
      name: `${METRIC_PREFIX}http_requests_in_flight`,
      help: 'Requests being handled now.',
    }),
    rateLimitRejections: new Counter({
      registers: [api],
      name: `${METRIC_PREFIX}rate_limit_rejections_total`,
      help: 'Requests refused with 429: over an org rate limit, too many failed authentications, test sends or redeliveries.',
      labelNames: ['reason'],
      collect() {
        for (const reason of REJECTION_REASONS) this.inc({ reason }, 0);
      },
    }),
    webhookDeliveriesAbandoned: new Counter({
      registers: [worker],
      name: `${METRIC_PREFIX}webhook_deliveries_abandoned_total`,
      help: 'Deliveries given up after their last attempt failed.',
    }),
    retentionDeletedRows: new Counter({
      registers: [worker],
      name: `${METRIC_PREFIX}retention_deleted_rows_total`,
      help: 'Rows of history the retention job removed, by table.',
      labelNames: ['table'],
    }),
    retentionLastSuccess: new Gauge({
      registers: [worker],
      name: `${METRIC_PREFIX}retention_last_success_timestamp_seconds`,
      help: 'When this process last completed a retention run (Unix time; 0 before the first).',
      aggregator: 'max',
    }),
    jobsCompleted: new Counter({
      registers: [worker],
      name: `${METRIC_PREFIX}jobs_completed_total`,
      help: 'Runs of background jobs (src/jobs/) this process finished, by job.',
      labelNames: ['job'],
    }),
    jobsFailed: new Counter({
      registers: [worker],
      name: `${METRIC_PREFIX}jobs_failed_total`,
      help: 'Runs of background jobs that failed in this process, by job (each may be run again, see jobs_retried_total).',
      labelNames: ['job'],
    }),
    jobsRetried: new Counter({
      registers: [worker],
      name: `${METRIC_PREFIX}jobs_retried_total`,
      help: 'Runs of background jobs this process began again after an earlier run failed or its worker died, by job.',
      labelNames: ['job'],
    }),
    eventToFirstAttempt: new Histogram({
      registers: [worker],
      name: `${METRIC_PREFIX}webhook_event_to_first_attempt_seconds`,
      help: 'From a delivery being queued (with its event, or by a redelivery) to the start of its first attempt.',
      buckets: FIRST_ATTEMPT_BUCKETS,
    }),
    contactImports: new Counter({
      registers: [api],
      name: 'voice_call_contact_imports_total',
      help: 'CSV contact imports by outcome: done, failed (its committed batches kept), or refused (org or process busy).',
      labelNames: ['outcome'],
      collect() {
        for (const outcome of ['done', 'failed', 'refused']) this.inc({ outcome }, 0);
      },
    }),
    campaignPlacements: new Counter({
      registers: [worker],
      name: `${METRIC_PREFIX}campaign_placements_total`,
      help: "Campaign contacts a dispatch pass claimed, by outcome: placed, refused (by the provider), unknown (being checked with it), suppressed, or given back because of the org's call cap (call_cap), its credits (insufficient_credits) or a fault outside the campaign (cannot_place).",
      labelNames: ['outcome'],
      collect() {
        for (const outcome of CAMPAIGN_PLACEMENT_OUTCOMES) this.inc({ outcome }, 0);
      },
    }),
    providerPlacements: new Counter({
      registers: [shared],
      name: `${METRIC_PREFIX}provider_placements_total`,
      help: 'Calls asked of a voice provider, by provider and outcome: placed, refused (upstream_error), unknown (no answer in time), then recovered or voided by reconciliation.',
      labelNames: ['provider', 'outcome'],
    }),
    providerPlacementSeconds: new Histogram({
      registers: [shared],
      name: `${METRIC_PREFIX}provider_placement_duration_seconds`,
      help: 'How long a voice provider took to answer a placement, by provider.',
      labelNames: ['provider'],
      buckets: REQUEST_BUCKETS,
    }),
    providerWebhooks: new Counter({
      registers: [shared],
      name: `${METRIC_PREFIX}provider_webhooks_total`,
      help: 'Reports received from voice providers, by provider and result: accepted, duplicate, held (call still being placed), unknown_call, refused_signature.',
      labelNames: ['provider', 'result'],
    }),
    providerLookups: new Counter({
      registers: [shared],
      name: `${METRIC_PREFIX}provider_reconciliations_total`,
      help: 'Calls looked up at their voice provider (reconciliation, cancellation, recovery), by provider and outcome: found, not_found, error.',
      labelNames: ['provider', 'outcome'],
    }),
    providerLookupsThrottled: new Counter({
      registers: [shared],
      name: `${METRIC_PREFIX}provider_lookups_throttled_total`,
      help: "Lookups that waited for their turn under the provider's rate limit, by provider.",
      labelNames: ['provider'],
    }),
  };
  // Merged once every metric is registered: a merge copies the registries' metrics as they are now.
  const exported = [shared, ...(role === 'worker' ? [] : [api]), ...(role === 'api' ? [] : [worker])];
  return { registry: Registry.merge(exported), ...recorders };
}

/** Adds the pool's size, idle and waiting counts, read at each scrape (summed over a cluster's processes). */
export function watchPool(metrics: Metrics, pool: pg.Pool): void {
  const on = { registers: [metrics.registry] };
  const gauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      ...on,
      name,
      help,
      collect() {
        this.set(read());
      },
    });
  gauge(`${METRIC_PREFIX}db_pool_connections`, 'Connections the pool holds.', () => pool.totalCount);
  gauge(`${METRIC_PREFIX}db_pool_idle_connections`, 'Connections the pool holds unused.', () => pool.idleCount);
  gauge(
    `${METRIC_PREFIX}db_pool_connections_in_use`,
    'Connections checked out of the pool now (held by a query or a transaction).',
    () => pool.totalCount - pool.idleCount,
  );
  gauge(`${METRIC_PREFIX}db_pool_waiting_requests`, 'Queries waiting for a connection.', () => pool.waitingCount);
}

/** What one scrape reads of the webhook queue. */
interface QueueReading {
  due: number;
  scheduled: number;
  oldestDueS: number;
}

/**
 * Adds the webhook queue's depth (due now and scheduled) and the age of its oldest due delivery, read
 * at each scrape (a cluster reports the largest reading, not a sum: every process sees the same queue).
 * A scrape while the database does not answer keeps the last values.
 */
export function watchWebhookQueue(metrics: Metrics, db: Db): void {
  const on = { registers: [metrics.registry], aggregator: 'max' as const };
  let last: QueueReading = { due: 0, scheduled: 0, oldestDueS: 0 };
  let reading: Promise<QueueReading> | null = null;
  const read = () =>
    (reading ??= sql<{ due: number; scheduled: number; oldest: Date | null }>`
      SELECT count(*) FILTER (WHERE next_attempt_at <= now()) AS due,
             count(*) FILTER (WHERE next_attempt_at > now()) AS scheduled,
             min(next_attempt_at) AS oldest
      FROM webhook_deliveries WHERE status = 'pending'`
      .execute(db)
      .then(({ rows }) => {
        const row = rows[0]!;
        const oldestDueS =
          row.oldest && row.oldest.getTime() <= Date.now() ? (Date.now() - row.oldest.getTime()) / 1000 : 0;
        last = { due: Number(row.due), scheduled: Number(row.scheduled), oldestDueS };
        return last;
      })
      .catch(() => last)
      .finally(() => setTimeout(() => (reading = null), 0)));
  new Gauge({
    ...on,
    name: `${METRIC_PREFIX}webhook_queue_depth`,
    help: 'Pending webhook deliveries: due now, or scheduled for a retry.',
    labelNames: ['state'],
    async collect() {
      const { due, scheduled } = await read();
      this.set({ state: 'due' }, due);
      this.set({ state: 'scheduled' }, scheduled);
    },
  });
  new Gauge({
    ...on,
    name: `${METRIC_PREFIX}webhook_queue_oldest_due_age_seconds`,
    help: 'How long the oldest due delivery has been waiting (0 when none is due).',
    async collect() {
      this.set((await read()).oldestDueS);
    },
  });
}

/** A job queue's depth as the engine last counted it. */
export interface JobQueueReading {
  job: string;
  ready: number;
  deferred: number;
  active: number;
}

/**
 * Adds the job queues' depth (ready, deferred, running), read at each scrape from `read` (the engine's
 * own counts; a cluster reports the largest reading: every process sees the same queues).
 */
export function watchJobQueues(metrics: Metrics, read: () => Promise<JobQueueReading[]>): void {
  new Gauge({
    registers: [metrics.registry],
    aggregator: 'max',
    name: `${METRIC_PREFIX}job_queue_depth`,
    help: 'Background jobs by job and state: ready to run, deferred (due later), active (running), as the job engine last counted them.',
    labelNames: ['job', 'state'],
    async collect() {
      for (const queue of await read()) {
        this.set({ job: queue.job, state: 'ready' }, queue.ready);
        this.set({ job: queue.job, state: 'deferred' }, queue.deferred);
        this.set({ job: queue.job, state: 'active' }, queue.active);
      }
    },
  });
}
