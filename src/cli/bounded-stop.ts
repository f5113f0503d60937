// A stop that cannot hang. Its steps run in order; at its deadline the process gives up on what is left
// and exits anyway: a database that never answers (a hung server, a network partition) keeps pg's pool
// from ever closing its connections, and an orchestrator would otherwise have to kill the process.
import type { Logger } from 'pino';
import type { Config } from '../config.js';

/** Names the step of a stop that begins now, for the log when the stop does not finish in time. */
export type StepReporter = (step: string) => void;

/** How long closing connections may take once the work in flight has ended or its timeout passed. */
export const CLOSE_GRACE_MS = 5_000;

/**
 * The longest a process's stop may take: the drain (SIGTERM only), the shutdown timeout once for the
 * HTTP requests in flight and once for the background work (they are waited for one after the other),
 * then the grace for closing connections.
 */
export function stopDeadlineMs(config: Config, signal: NodeJS.Signals): number {
  return (signal === 'SIGTERM' ? config.shutdownDrainMs : 0) + 2 * config.shutdownTimeoutMs + CLOSE_GRACE_MS;
}

/**
 * Runs `stop`, which names each step it begins through its argument, and resolves 0 once it finished,
 * or 1 at `deadlineMs` having logged the step it was still in (the process then exits with that step
 * left undone). Rejects when `stop` fails.
 */
export async function stopWithin(
  deadlineMs: number,
  logger: Logger,
  stop: (step: StepReporter) => Promise<void>,
): Promise<number> {
  let current = 'stopping';
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<number>((resolve) => {
    timer = setTimeout(() => {
      logger.warn({ step: current, deadlineMs }, `gave up waiting to stop (${current}); exiting`);
      resolve(1);
    }, deadlineMs);
  });
  const done = stop((step) => (current = step)).then(() => 0);
  // A step that fails after the deadline has no one left to tell; before it, the race below reports it.
  done.catch(() => undefined);
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}
