// The scale-out phase: the service as API-only processes (`serve --role api --processes N`) for N = 1,
// 2 and 4 on the one seeded PostgreSQL, each under the same load for a few read scenarios. Beside the
// throughput it reads where the CPU went (the service's processes, PostgreSQL's, the load generator's),
// which shows what limits the next process.
import type { LoadResult } from './load.js';
import { cpuMs, postgresCpuMs, treeCpuMs, type Child } from './processes.js';
import { medianLoad, medianOf, repeat } from './repeat.js';
import type { Scenario } from './scenarios.js';

/** The process counts measured. */
export const SCALE_OUT_PROCESSES = [1, 2, 4] as const;
/** The scenarios measured at each count: the first page of the calls list, and the cheapest read. */
export const SCALE_OUT_SCENARIOS = ['calls-big', 'call-detail'];

/** One scenario at one process count. */
export interface ScaleOutRow {
  processes: number;
  scenario: string;
  title: string;
  /** The median of the runs. */
  result: LoadResult;
  /** Each run's requests/s. */
  runsRps: number[];
  /** Share of one core used during the measured run, in percent (200 = both cores of this machine). */
  cpuPercent: { service: number; postgres: number; loadGenerator: number };
}

/** How to run the phase: start the service with N HTTP processes, and load it. */
export interface ScaleOutOptions {
  scenarios: Scenario[];
  start: (processes: number) => Promise<Child>;
  load: (server: Child, next: Scenario['service'], serverCpuMs: () => number) => Promise<LoadResult>;
  log: (message: string) => void;
  /** Load runs per row. */
  repetitions: number;
}

/** Runs every scenario at every process count, one service at a time; throws when a start fails. */
export async function benchScaleOut(options: ScaleOutOptions): Promise<ScaleOutRow[]> {
  const scenarios = options.scenarios.filter((scenario) => SCALE_OUT_SCENARIOS.includes(scenario.name));
  const rows: ScaleOutRow[] = [];
  for (const processes of SCALE_OUT_PROCESSES) {
    const service = await options.start(processes);
    try {
      for (const scenario of scenarios) {
        const runs = await repeat(options.repetitions, async () => {
          const before = { service: treeCpuMs(service.pid), postgres: postgresCpuMs(), load: cpuMs(process.pid) };
          const started = performance.now();
          const result = await options.load(service, scenario.service, () => treeCpuMs(service.pid));
          // The load run's warm-up is inside this window too: shares, not totals, are what it reports.
          const elapsed = performance.now() - started;
          const share = (ms: number) => (100 * ms) / elapsed;
          const cpuPercent = {
            service: share(treeCpuMs(service.pid) - before.service),
            postgres: share(postgresCpuMs() - before.postgres),
            loadGenerator: share(cpuMs(process.pid) - before.load),
          };
          return { result, cpuPercent };
        });
        const row: ScaleOutRow = {
          processes,
          scenario: scenario.name,
          title: scenario.title,
          result: medianLoad(runs.map((run) => run.result)),
          runsRps: runs.map((run) => run.result.rps),
          cpuPercent: medianOf(runs.map((run) => run.cpuPercent)),
        };
        options.log(
          `scale-out ${processes} process(es), ${scenario.name}: ${row.result.rps.toFixed(0)} req/s ` +
            `(runs ${row.runsRps.map((v) => v.toFixed(0)).join(', ')}), p99 ${row.result.p99.toFixed(1)} ms, ` +
            `${row.result.errors} errors; CPU % service ${row.cpuPercent.service.toFixed(0)}, ` +
            `PostgreSQL ${row.cpuPercent.postgres.toFixed(0)}, load generator ${row.cpuPercent.loadGenerator.toFixed(0)}`,
        );
        rows.push(row);
      }
    } finally {
      await service.stop();
    }
  }
  return rows;
}
