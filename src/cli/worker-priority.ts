// A process that runs only background work (the worker role, or the background child of `serve
// --processes`) yields the CPU to request serving on a shared machine: it lowers its scheduling
// priority to WORKER_NICE before it starts anything. On a machine of its own this changes nothing.
import { getPriority, setPriority } from 'node:os';
import type { Logger } from 'pino';

/**
 * Lowers this process's CPU priority to `nice` (never raises it: a process started at a lower priority
 * keeps it). Threads started afterwards inherit it. A refusal is logged, not thrown.
 */
export function lowerWorkerPriority(nice: number, logger: Logger): void {
  if (nice === 0) return;
  try {
    const current = getPriority();
    if (current >= nice) return;
    setPriority(nice);
    logger.info({ nice, was: current }, 'background work runs at a lower CPU priority');
  } catch (error) {
    logger.warn({ nice, err: error }, 'the CPU priority could not be lowered; background work runs at the usual one');
  }
}
