// The shape every background loop (call progress, webhook delivery) has, so start-up can stop them all.

/** A running background loop that can be stopped, finishing in-flight work within the bound. */
export interface BackgroundWorker {
  stop(timeoutMs: number): Promise<void>;
}
