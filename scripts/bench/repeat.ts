// Repetitions: every row of the benchmark is measured several times and reported as the median of
// its runs, because one run on a shared machine can be off by a wide margin.
import type { LoadResult } from './load.js';

/** The median of a list of numbers (the middle one, or the upper middle one); NaN for none. */
export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
}

/** Runs `measure` `times` times in a row and returns the results in order; throws what a run throws. */
export async function repeat<T>(times: number, measure: (run: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let run = 0; run < times; run += 1) results.push(await measure(run));
  return results;
}

/**
 * The median of each numeric field of `runs` (objects of one shape). `summed` fields are added up
 * instead (counts such as errors or missing deliveries, which must not hide behind a median).
 */
export function medianOf<T extends object>(runs: T[], summed: ReadonlyArray<keyof T> = []): T {
  const first = runs[0];
  if (!first) throw new Error('medianOf needs at least one run');
  const out = { ...first } as Record<string, unknown>;
  for (const [key, value] of Object.entries(first)) {
    if (typeof value !== 'number') continue;
    const values = runs.map((run) => (run as Record<string, number>)[key]!);
    out[key] = summed.includes(key as keyof T) ? values.reduce((a, b) => a + b, 0) : median(values);
  }
  return out as T;
}

/** Load runs folded into one: medians of the rates, latencies and CPU; requests and errors summed. */
export function medianLoad(runs: LoadResult[]): LoadResult {
  const statusCodes: Record<string, number> = {};
  for (const run of runs) {
    for (const [code, count] of Object.entries(run.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + count;
  }
  return { ...medianOf(runs, ['requests', 'errors']), statusCodes };
}
