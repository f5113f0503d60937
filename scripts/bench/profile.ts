// `npm run bench:profile -- --scenario=NAME [--duration=SECONDS] [--top=N]`: runs one scenario against the
// service started with `--cpu-prof` and against its floors, then prints where the service's CPU went by
// layer and its busiest functions, beside the CPU per request of the service, of the fair floor (which
// prepares the statements the service prepares) and of the unprepared floor. The
// profile covers the service process's whole life (start-up, a warm-up and the measured run); start-up
// is a few hundred ms of it. Scenarios: see scripts/bench/scenarios.ts (default call-detail).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { summariseCpuProfile, type CpuProfile } from './profile-summary.js';
import { log, openBenchSession, option, runCommand, WARMUP_SEC } from './harness.js';
import { scenarioNamed } from './scenarios.js';

const WATCHDOG_MS = 10 * 60_000;

async function main(): Promise<void> {
  const name = option('scenario') || 'call-detail';
  const seconds = Number(option('duration') || 10);
  const top = Number(option('top') || 25);
  const session = await openBenchSession({ watchdogMs: WATCHDOG_MS });
  try {
    const scenario = scenarioNamed(session.fixture, name);
    const floorNext = (scenario.baseline ?? scenario.writeBaseline)?.next;
    const profiles = path.join(session.temp, 'profiles');
    const service = await session.startService({ nodeArgs: ['--cpu-prof', '--cpu-prof-dir', profiles] });
    const floors = floorNext ? await session.startFloors([scenario]) : null;

    const connections = scenario.connections;
    await session.load(service, scenario.service, { seconds: WARMUP_SEC, warmupSec: 0, connections });
    const measured = await session.load(service, scenario.service, { seconds, connections });
    log(`${name}: ${measured.rps.toFixed(0)} req/s, ${measured.errors} errors`);
    // The profile is written when the process exits.
    await service.stop();
    const floor = floors && floorNext ? await session.load(floors.prepared, floorNext, { seconds }) : null;
    const unprepared = floors && floorNext ? await session.load(floors.unprepared, floorNext, { seconds }) : null;

    const file = readdirSync(profiles).find((entry) => entry.endsWith('.cpuprofile'));
    if (!file) throw new Error('the service wrote no CPU profile');
    const summary = summariseCpuProfile(
      JSON.parse(readFileSync(path.join(profiles, file), 'utf8')) as CpuProfile,
      process.cwd(),
    );
    const perRequestUs = measured.serverCpuMsPerRequest * 1000;
    const usOf = (ms: number) => ((ms / summary.total) * perRequestUs).toFixed(0);
    const lines = [
      `${scenario.title}: ${measured.rps.toFixed(0)} req/s; CPU per request: service ${perRequestUs.toFixed(0)} us` +
        (floor ? `, floor ${(floor.serverCpuMsPerRequest * 1000).toFixed(0)} us (${floor.rps.toFixed(0)} req/s)` : '') +
        (floor ? ` = ${(measured.serverCpuMsPerRequest / floor.serverCpuMsPerRequest).toFixed(2)}x the floor` : '') +
        (unprepared
          ? `; unprepared floor ${(unprepared.serverCpuMsPerRequest * 1000).toFixed(0)} us (${unprepared.rps.toFixed(0)} req/s)`
          : ''),
      '',
      `${'Layer'.padEnd(24)} ${'share'.padStart(6)} ${'us/req'.padStart(7)}`,
      ...summary.layers.map(
        ({ layer, amount }) =>
          `${layer.padEnd(24)} ${`${((100 * amount) / summary.total).toFixed(1)}%`.padStart(6)} ${usOf(amount).padStart(7)}`,
      ),
      '',
      `Top ${top} functions by self time (built-ins counted in their caller's layer):`,
      ...summary.functions
        .slice(0, top)
        .map(
          (fn) =>
            `${`${((100 * fn.amount) / summary.total).toFixed(1)}%`.padStart(6)} ${usOf(fn.amount).padStart(5)} us  ${fn.layer.padEnd(22)} ${fn.name}  ${fn.where}`,
        ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await session.close();
  }
}

runCommand('bench:profile', main);
