// `npm run bench`: seeds the benchmark database, starts the real service and the bare floors (one that
// prepares the statements the service prepares, one that does not) as child processes on loopback,
// runs every scenario, the webhook delivery test, the start-up and memory measurements, the campaign
// dispatch and scale-out phases, then prints the report and writes bench-report.json. Stops by itself
// (60-minute watchdog). Options: --duration=SECONDS (per measured run, default 10),
// --repeat=N (runs per row, reported as their median; default 3),
// --only=NAME,... (scenario names, `webhooks`, `provider-placement`, `sign-in-flood`, `delivery-scale`,
// `campaign-dispatch` or `scale-out`),
// --placement-concurrency=N (placements in flight in the provider-placement phase, default 50),
// --campaign-seconds=N (how long each campaign dispatch run dials, default 60),
// --profile (CPU profile of the measured server, and of the campaign dispatch's worker, in
// .data/bench-profiles; `npm run bench:profile` reads one by layer).
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { makeLocalTls } from '../../src/tools/local-ca.js';
import { CONNECTIONS, log, openBenchSession, option, runCommand, SERVICE_SETTINGS, WARMUP_SEC } from './harness.js';
import type { LoadResult } from './load.js';
import { cpuMs, rssMiB, sampleRss, type Child } from './processes.js';
import { startReceivers } from './receivers.js';
import {
  evaluateTargets,
  formatReport,
  scenarioRatios,
  type BenchReport,
  type ScenarioReport,
  type ScenarioRun,
} from './report.js';
import { median, medianLoad, repeat } from './repeat.js';
import { benchScaleOut, type ScaleOutRow } from './scale-out.js';
import { benchDeliveryScale, type DeliveryScaleRow } from './delivery-scale.js';
import {
  benchCampaignDispatch,
  CAMPAIGN_SECONDS,
  CAMPAIGN_SIMULATOR_STEP_MS,
  type CampaignDispatchReport,
} from './campaign-dispatch.js';
import { buildScenarios } from './scenarios.js';
import {
  benchProviderPlacement,
  CONCURRENT_PLACEMENTS,
  PROVIDER_LATENCY_MS,
  startMockVapi,
  type ProviderPlacementReport,
} from './provider-placement.js';
import { benchSignInFlood, FLOOD_ROUNDS, type SignInFloodReport } from './sign-in-flood.js';
import { benchWebhooks, HANGING_RECEIVER, RECEIVER_COUNT } from './webhooks.js';

const BOOTS = 3;
const WATCHDOG_MS = 60 * 60_000;

const describe = (result: LoadResult) =>
  `${result.rps.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
  `${result.errors} errors, ${(result.serverCpuMsPerRequest * 1000).toFixed(0)} us CPU/req`;

async function main(): Promise<void> {
  const started = performance.now();
  const loadAtStart = os.loadavg()[0]!;
  const durationSec = Number(option('duration') ?? 10);
  const repetitions = Number(option('repeat') ?? 3);
  if (!Number.isInteger(repetitions) || repetitions < 1)
    throw new Error('--repeat takes a whole number of runs, 1 or more');
  const only = option('only')?.split(',').filter(Boolean);
  const profile = option('profile') !== undefined;
  const wanted = (name: string) => !only || only.includes(name);
  const session = await openBenchSession({ watchdogMs: WATCHDOG_MS });
  const { database, fixture } = session;
  try {
    const tls = await makeLocalTls({ caName: 'Benchmark webhook CA' });
    const caFile = path.join(session.temp, 'ca.pem');
    writeFileSync(caFile, tls.caCert);
    session.serviceEnv.NODE_EXTRA_CA_CERTS = caFile;
    const farm = await startReceivers(tls, RECEIVER_COUNT, new Set([HANGING_RECEIVER]));
    // The service's Vapi is a loopback stand-in answering placements in PROVIDER_LATENCY_MS.
    const vapi = await startMockVapi(PROVIDER_LATENCY_MS);
    Object.assign(session.serviceEnv, {
      VAPI_API_KEY: 'bench-vapi-key',
      VAPI_WEBHOOK_SECRET: 'bench-vapi-secret',
      VAPI_BASE_URL: vapi.url,
    });

    const allScenarios = buildScenarios(fixture, Math.floor(Date.now() / 1000) % 100_000);
    const scenarios = allScenarios.filter((s) => wanted(s.name));

    const readyMs: number[] = [];
    let service: Child | null = null;
    for (let boot = 1; boot <= BOOTS; boot += 1) {
      const t0 = performance.now();
      const profiling = profile && boot === BOOTS;
      const child = await session.startService({
        nodeArgs: profiling ? ['--cpu-prof', '--cpu-prof-dir', path.resolve('.data/bench-profiles')] : [],
      });
      readyMs.push(performance.now() - t0);
      if (boot < BOOTS) await child.stop();
      else service = child;
    }
    log(`service ready in ${readyMs.map((v) => v.toFixed(0)).join(', ')} ms at ${service!.address}`);
    const floors = await session.startFloors(scenarios);
    const idleRssMiB = rssMiB(service!.pid) ?? NaN;
    const rss = sampleRss(service!.pid);

    const results: ScenarioReport[] = [];
    // An untimed round over every scenario first, so the first measured ones do not pay for JIT
    // compilation and cold caches in both servers.
    for (const scenario of scenarios) {
      await session.load(service!, scenario.service, {
        seconds: WARMUP_SEC,
        warmupSec: 0,
        connections: scenario.connections,
      });
      const floor = scenario.baseline ?? scenario.writeBaseline;
      if (floor) {
        await session.load(floors.prepared, floor.next, { seconds: WARMUP_SEC, warmupSec: 0 });
        await session.load(floors.unprepared, floor.next, { seconds: WARMUP_SEC, warmupSec: 0 });
      }
    }
    for (const scenario of scenarios) {
      const scenarioRss = sampleRss(service!.pid);
      const floor = scenario.baseline ?? scenario.writeBaseline;
      // Service and floors alternate, so a slow spell of the machine weighs on both sides of a ratio.
      const runs = await repeat(repetitions, async (): Promise<ScenarioRun> => {
        const measured: ScenarioRun = {
          service: await session.load(service!, scenario.service, {
            seconds: durationSec,
            connections: scenario.connections,
          }),
        };
        if (floor) {
          measured.baseline = await session.load(floors.prepared, floor.next, { seconds: durationSec });
          measured.unprepared = await session.load(floors.unprepared, floor.next, { seconds: durationSec });
        }
        return measured;
      });
      const baselineRuns = runs.flatMap((run) => (run.baseline ? [run.baseline] : []));
      const unpreparedRuns = runs.flatMap((run) => (run.unprepared ? [run.unprepared] : []));
      const report: ScenarioReport = {
        name: scenario.name,
        title: scenario.title,
        kind: scenario.writeBaseline ? 'write' : 'read',
        service: medianLoad(runs.map((run) => run.service)),
        ...(baselineRuns.length > 0 ? { baseline: medianLoad(baselineRuns) } : {}),
        ...(unpreparedRuns.length > 0 ? { unprepared: medianLoad(unpreparedRuns) } : {}),
        runs,
        ratios: scenarioRatios(runs, 'baseline'),
        unpreparedRatios: scenarioRatios(runs, 'unprepared'),
        serviceRssMiB: scenarioRss.stop(),
      };
      log(`${scenario.name}: ${describe(report.service)}, peak RSS ${report.serviceRssMiB.toFixed(0)} MiB`);
      if (report.baseline) log(`${scenario.name} floor: ${describe(report.baseline)}`);
      if (report.unprepared) log(`${scenario.name} unprepared floor: ${describe(report.unprepared)}`);
      if (report.ratios) log(`${scenario.name} req/s ratios: ${report.ratios.rps.map((v) => v.toFixed(2)).join(', ')}`);
      results.push(report);
    }
    let webhooks: BenchReport['webhooks'] = null;
    if (wanted('webhooks')) {
      const phaseRss = sampleRss(service!.pid);
      const delivery = await benchWebhooks({
        db: database.db,
        origin: service!.address,
        orgs: fixture.hooks,
        farm,
        steadySeconds: durationSec * 2,
        backlogPerOrg: 300,
        repetitions,
      });
      webhooks = { ...delivery, serviceRssMiB: phaseRss.stop() };
      log(
        `webhooks: ${webhooks.backlog.perSecond.toFixed(0)} deliveries/s, p99 ${webhooks.withHanging.p99.toFixed(1)} ms, peak RSS ${webhooks.serviceRssMiB.toFixed(0)} MiB`,
      );
    }
    let providerPlacement: ProviderPlacementReport | null = null;
    if (wanted('provider-placement')) {
      providerPlacement = await benchProviderPlacement({
        db: database.db,
        origin: service!.address,
        mock: vapi,
        seconds: durationSec,
        warmupSec: WARMUP_SEC,
        concurrency: Number(option('placement-concurrency') ?? CONCURRENT_PLACEMENTS),
        serviceCpuMs: () => cpuMs(service!.pid),
      });
      log(
        `provider placement: overhead p50 ${providerPlacement.overheadP50.toFixed(1)} ms, p99 ${providerPlacement.overheadP99.toFixed(1)} ms above ${PROVIDER_LATENCY_MS} ms, ${providerPlacement.errors} errors`,
      );
    }
    const peakRssMiB = rss.stop();
    await vapi.close();
    await farm.close();
    await service!.stop();
    await floors.prepared.stop();
    await floors.unprepared.stop();

    // With the service stopped: a service of its own behind one trusted proxy, flooded with sign-ins.
    let signInFlood: SignInFloodReport | null = null;
    if (wanted('sign-in-flood')) {
      const flooded = await session.startService({
        env: { TRUST_PROXY_HOPS: '1' },
        nodeArgs: profile ? ['--cpu-prof', '--cpu-prof-dir', path.resolve('.data/bench-profiles')] : [],
      });
      signInFlood = await benchSignInFlood({
        db: database.db,
        service: flooded,
        rounds: FLOOD_ROUNDS,
        repetitions,
        log,
      });
      await flooded.stop();
    }

    // With the service stopped: backlogs drained by 1, 2 and 4 worker processes over 1, 100 and 1,000 endpoints.
    let deliveryScale: DeliveryScaleRow[] | null = null;
    if (wanted('delivery-scale')) {
      deliveryScale = await benchDeliveryScale({
        db: database.db,
        tls,
        deliveries: 4_000,
        repetitions,
        startWorker: () =>
          session.startService({ args: ['--role', 'worker'], ready: /Voice-call API is running \(role worker\)/ }),
        log,
      });
    }

    // With the service stopped: one worker process dispatching a 100,000-contact campaign, an API process beside it.
    let campaignDispatch: CampaignDispatchReport | null = null;
    if (wanted('campaign-dispatch')) {
      // Calls of about a second; the sweep at its shortest, so a dispatch job handed over is picked up soon.
      const env = { SIMULATOR_STEP_MS: String(CAMPAIGN_SIMULATOR_STEP_MS), CAMPAIGN_SWEEP_INTERVAL_MS: '1000' };
      const calls = allScenarios.find((scenario) => scenario.name === 'calls-big')!;
      campaignDispatch = await benchCampaignDispatch({
        db: database.db,
        startApi: () => session.startService({ args: ['--role', 'api'], env }),
        startWorker: () =>
          session.startService({
            args: ['--role', 'worker'],
            env,
            nodeArgs: profile ? ['--cpu-prof', '--cpu-prof-dir', path.resolve('.data/bench-profiles')] : [],
            ready: /Voice-call API is running \(role worker\)/,
          }),
        list: calls.service,
        load: (server, next, run) => session.load(server, next, run),
        cpuMs,
        seconds: Number(option('campaign-seconds') ?? CAMPAIGN_SECONDS),
        listSeconds: durationSec * 2,
        repetitions,
        log,
      });
    }

    // Last, with nothing else of the benchmark running: 1, 2 and 4 API-only processes.
    let scaleOut: ScaleOutRow[] | null = null;
    if (wanted('scale-out')) {
      scaleOut = await benchScaleOut({
        scenarios: allScenarios,
        start: (processes) => session.startService({ args: ['--role', 'api', '--processes', String(processes)] }),
        load: (server, next, serverCpuMs) => session.load(server, next, { seconds: durationSec, serverCpuMs }),
        log,
        repetitions,
      });
    }

    const { rows } = await sql<{ server_version: string }>`SHOW server_version`.execute(database.db);
    const cpus = os.cpus();
    const partial: Omit<BenchReport, 'targets'> = {
      date: new Date().toISOString(),
      machine: {
        cpu: cpus[0]?.model ?? 'unknown',
        cores: cpus.length,
        memoryGiB: Math.round(os.totalmem() / 2 ** 30),
        os: `${os.type()} ${os.release()}`,
        node: process.versions.node,
        postgres: rows[0]!.server_version,
      },
      loadAverage: { start: loadAtStart, end: os.loadavg()[0]! },
      settings: {
        connections: CONNECTIONS,
        durationSec,
        repetitions,
        warmupSec: WARMUP_SEC,
        ...SERVICE_SETTINGS,
        database: process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded',
      },
      seed: { seeded: fixture.seeded, seconds: fixture.seedMs / 1000 },
      scenarios: results,
      webhooks,
      scaleOut,
      deliveryScale,
      campaignDispatch,
      providerPlacement,
      signInFlood,
      startup: { readyMs, medianMs: median(readyMs) },
      memory: { idleRssMiB, peakRssMiB },
      totalSeconds: (performance.now() - started) / 1000,
    };
    const report: BenchReport = { ...partial, targets: evaluateTargets(partial) };
    process.stdout.write(`${formatReport(report)}\n`);
    writeFileSync('bench-report.json', `${JSON.stringify(report, null, 2)}\n`);
    log(`done in ${report.totalSeconds.toFixed(0)} s; wrote bench-report.json`);
  } finally {
    await session.close();
  }
}

runCommand('bench', main);
