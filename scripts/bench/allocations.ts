// `npm run bench:alloc -- --scenario=NAME [--duration=SECONDS] [--top=N]`: runs one scenario against
// the service and against its fair floor, each started with the inspector on loopback, and samples
// every allocation during the measured run. Prints the bytes allocated per request by each, by layer,
// and the service's busiest allocating functions. Unlike CPU time on a shared machine, bytes per
// request hardly vary from run to run, so a change to the request path can be judged by them. Scenarios:
// see scripts/bench/scenarios.ts (default call-detail).
import { inspectorAddress, sampleAllocations } from './inspector.js';
import { openBenchSession, option, runCommand, WARMUP_SEC, type BenchSession } from './harness.js';
import type { Child } from './processes.js';
import { summariseHeapProfile, type ProfileSummary } from './profile-summary.js';
import { scenarioNamed, type Scenario } from './scenarios.js';

const WATCHDOG_MS = 10 * 60_000;
const INSPECT_ON_LOOPBACK = ['--inspect=127.0.0.1:0'];

const bytes = (value: number) => Math.round(value).toLocaleString('en-GB');

/** Bytes allocated per request by one server over a measured run, summarised. */
interface Allocations {
  requests: number;
  perRequest: number;
  summary: ProfileSummary;
}

/** A warm-up, then a measured run of `seconds` with every allocation sampled. */
async function measure(
  session: BenchSession,
  server: Child,
  next: Scenario['service'],
  seconds: number,
  connections: number | undefined,
): Promise<Allocations> {
  await session.load(server, next, { seconds: WARMUP_SEC, warmupSec: 0, connections });
  const { result, head } = await sampleAllocations(inspectorAddress(server.output()), () =>
    session.load(server, next, { seconds, warmupSec: 0, connections }),
  );
  if (result.errors > 0) throw new Error(`${result.errors} requests failed during the measured run`);
  const summary = summariseHeapProfile(head, process.cwd());
  return { requests: result.requests, perRequest: summary.total / Math.max(1, result.requests), summary };
}

async function main(): Promise<void> {
  const name = option('scenario') || 'call-detail';
  const seconds = Number(option('duration') || 5);
  const top = Number(option('top') || 25);
  const session = await openBenchSession({ watchdogMs: WATCHDOG_MS });
  try {
    const scenario = scenarioNamed(session.fixture, name);
    const floorNext = (scenario.baseline ?? scenario.writeBaseline)?.next;
    const service = await session.startService({ nodeArgs: INSPECT_ON_LOOPBACK });
    const served = await measure(session, service, scenario.service, seconds, scenario.connections);
    const floors = floorNext ? await session.startFloors([scenario], { nodeArgs: INSPECT_ON_LOOPBACK }) : null;
    const floor = floors && floorNext ? await measure(session, floors.prepared, floorNext, seconds, undefined) : null;

    const floorLayer = new Map(floor?.summary.layers.map(({ layer, amount }) => [layer, amount]) ?? []);
    const perRequest = (amount: number, of: Allocations) => bytes(amount / Math.max(1, of.requests));
    const lines = [
      `${scenario.title}: bytes allocated per request: service ${bytes(served.perRequest)} (${served.requests} requests)` +
        (floor
          ? `, floor ${bytes(floor.perRequest)} (${floor.requests} requests) = ${(served.perRequest / floor.perRequest).toFixed(2)}x the floor`
          : ''),
      '',
      `${'Layer'.padEnd(24)} ${'service'.padStart(9)} ${(floor ? 'floor' : '').padStart(9)}`,
      ...served.summary.layers.map(
        ({ layer, amount }) =>
          `${layer.padEnd(24)} ${perRequest(amount, served).padStart(9)} ${(floor ? perRequest(floorLayer.get(layer) ?? 0, floor) : '').padStart(9)}`,
      ),
      ...(floor?.summary.layers ?? [])
        .filter(({ layer }) => !served.summary.layers.some((entry) => entry.layer === layer))
        .map(({ layer, amount }) => `${layer.padEnd(24)} ${'0'.padStart(9)} ${perRequest(amount, floor!).padStart(9)}`),
      '',
      `Top ${top} functions of the service by bytes allocated per request (built-ins counted in their caller's layer):`,
      ...served.summary.functions
        .slice(0, top)
        .map((fn) => `${perRequest(fn.amount, served).padStart(7)} B  ${fn.layer.padEnd(22)} ${fn.name}  ${fn.where}`),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await session.close();
  }
}

runCommand('bench:alloc', main);
