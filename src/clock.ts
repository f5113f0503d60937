// The source of "now" every service and worker reads, so tests can substitute their own.

/** The source of "now"; tests substitute a controllable one. */
export interface Clock {
  now(): Date;
}

/** The clock of a running process: the system's time. */
export const systemClock: Clock = { now: () => new Date() };
