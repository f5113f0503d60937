// Large deletions and updates done in bounded steps, so no statement holds locks or runs long.

/** Runs `batch` (which deletes at most `batchSize` rows) until it deletes fewer; returns the total deleted. */
export async function deleteInBatches(batch: () => Promise<number>, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await batch();
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

/**
 * Runs `step` from the start of a seq-ordered walk, each step after the last seq the previous one
 * reached, until a step finds nothing more; returns the total `step` changed.
 */
export async function walkInBatches(
  step: (afterSeq: string) => Promise<{ count: number; lastSeq: string | null }>,
): Promise<number> {
  let total = 0;
  let afterSeq = '0';
  for (;;) {
    const { count, lastSeq } = await step(afterSeq);
    total += count;
    if (lastSeq === null) return total;
    afterSeq = lastSeq;
  }
}
