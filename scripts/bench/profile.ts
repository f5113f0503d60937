// `npm run bench:profile -- --scenario=NAME [--duration=SECONDS] [--top=N]`: runs one scenario against the
// service started with `--cpu-prof` and against its floors, then prints where the service's CPU went by
// layer and its busiest functions, beside the CPU per request of the service, of the fair floor (which
// prepares the statements the service prepares) and of the unprepared floor. The
// profile covers the service process's whole life (start-up, a warm-up and the measured run); start-up
// is a few hundred ms of it. Scenarios: see scripts/bench/scenarios.ts (default call-detail).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { summariseCpuProfile } from './profile-summary.js';
import { log, openBenchSession, option, WARMUP_SEC } from './harness.js';
import { buildScenarios } from './scenarios.js';

const WATCHDOG_MS = 10 * 60_000;

const pad = (text: string, width: number) => (text.length >= width ? text : text + ' '.repeat(width - text.length));
const left = (text: string, width: number) => (text.length >= width ? text : ' '.repeat(width - text.length) + text);

async function main(): Promise<void> {
  const name = option('scenario') || 'call-detail';
  const seconds = Number(option('duration') || 10);
  const top = Number(option('top') || 25);
  const session = await openBenchSession({ watchdogMs: WATCHDOG_MS });
  try {
    const scenario = buildScenarios(session.fixture, Math.floor(Date.now() / 1000) % 100_000).find(
      (candidate) => candidate.name === name,
    );
    if (!scenario) throw new Error(`no scenario named ${name} (see scripts/bench/scenarios.ts)`);
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
    const summary = summariseCpuProfile(JSON.parse(readFileSync(path.join(profiles, file), 'utf8')), process.cwd());
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
      `${pad('Layer', 24)} ${left('share', 6)} ${left('us/req', 7)}`,
      ...summary.layers.map(
        ({ layer, amount }) =>
          `${pad(layer, 24)} ${left(`${((100 * amount) / summary.total).toFixed(1)}%`, 6)} ${left(usOf(amount), 7)}`,
      ),
      '',
      `Top ${top} functions by self time (built-ins counted in their caller's layer):`,
      ...summary.functions
        .slice(0, top)
        .map(
          (fn) =>
            `${left(`${((100 * fn.amount) / summary.total).toFixed(1)}%`, 6)} ${left(usOf(fn.amount), 5)} us  ${pad(fn.layer, 22)} ${fn.name}  ${fn.where}`,
        ),
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    await session.close();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error('bench:profile failed:', error);
    process.exit(1);
  },
);
