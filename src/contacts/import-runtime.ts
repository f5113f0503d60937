// This process's CSV imports that run in the background: how many run (bounded by
// CONTACT_IMPORTS_PER_PROCESS), and a stop signal for shutdown, after which each ends after its batch.
/** The background imports of one process. */
export interface ImportRuntime {
  /** Aborted at shutdown: a running import stops before its next batch and is recorded as failed. */
  readonly stopping: AbortSignal;
  /** Takes a slot for an import unless `limit` are taken; returns whether it did. */
  tryAcquire(limit: number): boolean;
  /** Frees a slot taken by tryAcquire for an import that did not start. */
  release(): void;
  /** Keeps `work` (which holds a slot) until it settles, then frees its slot. */
  track(work: Promise<unknown>): void;
  /** Signals every import to stop and waits for them to record how far they got. */
  close(): Promise<void>;
}

/** A runtime with no import running. */
export function createImportRuntime(): ImportRuntime {
  const stop = new AbortController();
  const tracked = new Set<Promise<unknown>>();
  let running = 0;
  return {
    stopping: stop.signal,
    tryAcquire(limit) {
      if (running >= limit || stop.signal.aborted) return false;
      running += 1;
      return true;
    },
    release() {
      running -= 1;
    },
    track(work) {
      const settled = work.then(
        () => undefined,
        () => undefined,
      );
      const done = settled.finally(() => {
        running -= 1;
        tracked.delete(done);
      });
      tracked.add(done);
    },
    async close() {
      stop.abort();
      await Promise.all(tracked);
    },
  };
}
