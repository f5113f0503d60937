// Large deletions done in bounded steps, so no statement holds locks or runs long.

/** Runs `batch` (which deletes at most `batchSize` rows) until it deletes fewer; returns the total deleted. */
export async function deleteInBatches(batch: () => Promise<number>, batchSize: number): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await batch();
    total += deleted;
    if (deleted < batchSize) return total;
  }
}
