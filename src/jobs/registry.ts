// Every kind of job the service runs, by name, in one place: its payload's type, how many times a failed
// run is tried again, and how long one run may take. A feature adds its kinds here.
import { JOB_DEFAULT_EXPIRY_S } from './policy.js';

/** How a kind of job is queued; `T` is its payload's type. */
export interface JobKind<T extends object> {
  /** Runs after a failed first one (a run whose worker died or went silent counts as failed). */
  readonly retries: number;
  /** How long one run may take before it counts as failed (seconds). */
  readonly expirySeconds: number;
  /** Whether it runs on a schedule (JobEngine.every) rather than when sent. */
  readonly periodic: boolean;
  /** Carries the payload's type; never set. */
  readonly payload?: T;
}

/** The kinds an engine knows, by name (letters, digits, `.`, `-`, `_` and `/`). */
export type JobRegistry = Record<string, JobKind<object>>;

/** The names of a registry's kinds. */
export type JobName<R extends JobRegistry> = keyof R & string;

/** The names of a registry's periodic kinds. */
export type PeriodicJobName<R extends JobRegistry> = {
  [N in JobName<R>]: R[N]['periodic'] extends true ? N : never;
}[JobName<R>];

/** The payload of the kind `N`. */
export type JobData<R extends JobRegistry, N extends JobName<R>> = R[N] extends JobKind<infer T> ? T : never;

/** The payload of a periodic run: nothing. */
export type PeriodicData = Record<string, never>;

/** A kind of job sent with a payload `T`. */
export function jobKind<T extends object>(settings: {
  retries: number;
  expirySeconds?: number;
}): JobKind<T> & { periodic: false } {
  return { retries: settings.retries, expirySeconds: settings.expirySeconds ?? JOB_DEFAULT_EXPIRY_S, periodic: false };
}

/**
 * A periodic kind: a run that fails or whose worker dies is not run again; the next interval's run
 * does its work.
 */
export function periodicKind(expirySeconds = JOB_DEFAULT_EXPIRY_S): JobKind<PeriodicData> & { periodic: true } {
  return { retries: 0, expirySeconds, periodic: true };
}

/** The service's jobs. */
export const SERVICE_JOBS = {
  'maintenance.retention': periodicKind(60 * 60),
  'webhooks.endpoint-cleanup': periodicKind(),
  // A campaign's passes for a few seconds; a run whose worker died is run again (passes are safe to repeat).
  'campaigns.dispatch': jobKind<{ campaignId: string }>({ retries: 3, expirySeconds: 300 }),
  'campaigns.sweep': periodicKind(60),
  // A run lasts RECONCILE_RUN_MS at the most, plus the lookups and hang-ups it has begun.
  'calls.reconcile': periodicKind(120),
} as const satisfies JobRegistry;

/** The type of the service's registry. */
export type ServiceJobs = typeof SERVICE_JOBS;
