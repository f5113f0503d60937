// The job engine's timings, named in one place: how fast a stopped worker's job is taken back, how long
// a job may run, how long a statement of the engine may take.

/** The PostgreSQL schema pg-boss keeps its tables and functions in. */
export const JOB_SCHEMA = 'pgboss';

/**
 * How often (seconds) a running job's worker tells the database it is alive; a job whose worker stays
 * silent this long is failed, and retried where its kind allows. pg-boss's smallest allowed value.
 */
export const JOB_HEARTBEAT_S = 10;

/** How often (seconds) a worker process looks for jobs whose heartbeat or time ran out. */
export const JOB_SUPERVISE_INTERVAL_S = 5;

/** How long (seconds) a job of a kind that does not say otherwise may stay running. */
export const JOB_DEFAULT_EXPIRY_S = 15 * 60;

/** How long the server may run one statement of the job engine (ms). */
export const JOB_STATEMENT_TIMEOUT_MS = 30_000;

/** How long completed and failed jobs are kept for inspection (seconds). */
export const JOB_KEEP_FINISHED_S = 24 * 60 * 60;

/** While the database is unreachable, how often the engine tries to start or checks it answers again (ms). */
export const JOB_OUTAGE_PROBE_MS = 2_000;
