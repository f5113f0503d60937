// The placement overhead: POST /calls for a Vapi agent against a loopback stand-in for Vapi that holds
// each POST /call for a fixed time, with a fixed number of placements in flight. Each placement's overhead
// is its latency at the client minus the time the stand-in held that very request (matched by our call id).
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { sql } from 'kysely';
import type { Db } from '../../src/database/connect.js';
import { issueApiKey } from '../../src/orgs/api-keys.js';
import { createAgent, createOrg } from '../../src/orgs/service.js';
import { startChild } from './processes.js';

/** How long the stand-in takes to answer a placement, and how many placements run at once by default. */
export const PROVIDER_LATENCY_MS = 200;
export const CONCURRENT_PLACEMENTS = 50;

/** The measured overheads, in milliseconds above the provider's own time. */
export interface ProviderPlacementReport {
  providerLatencyMs: number;
  concurrency: number;
  seconds: number;
  placements: number;
  errors: number;
  overheadP50: number;
  overheadP99: number;
  overheadMax: number;
  latencyP50: number;
  latencyP99: number;
  /** The service process's CPU time per placement answered during the measured seconds. */
  serviceCpuMsPerPlacement: number;
}

/** The stand-in for Vapi, running in a process of its own (./mock-vapi.ts). */
export interface MockVapi {
  url: string;
  /** Milliseconds from a request's first byte to its answer's last, by the call id it carried, so far. */
  heldMs(): Promise<Map<string, number>>;
  close(): Promise<void>;
}

/** Starts the stand-in on 127.0.0.1 in a child process; POST /call answers 201 after `latencyMs`. */
export async function startMockVapi(latencyMs: number): Promise<MockVapi> {
  const child = await startChild('scripts/bench/mock-vapi.ts', {
    args: [String(latencyMs)],
    env: process.env,
    ready: /listening on (http:\/\/\S+)/,
    timeoutMs: 30_000,
  });
  return {
    url: child.address,
    heldMs: async () => {
      const { body } = await request(`${child.address}/held`);
      return new Map(Object.entries((await body.json()) as Record<string, number>));
    },
    close: async () => {
      await child.stop();
    },
  };
}

function percentile(sorted: number[], share: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]!;
}

/**
 * Keeps `concurrency` placements in flight (each worker places again as soon as its last one is
 * answered) for `seconds` through the service at `origin`, for a fresh org whose agent uses Vapi (the
 * service's VAPI_BASE_URL must point at `mock`); placements started in the first `warmupSec` are not counted.
 */
export async function benchProviderPlacement(options: {
  db: Db;
  origin: string;
  mock: MockVapi;
  seconds: number;
  warmupSec: number;
  concurrency: number;
  /** The service process's CPU time so far, in ms. */
  serviceCpuMs: () => number;
}): Promise<ProviderPlacementReport> {
  // What earlier phases and runs left dead in the tables a placement rewrites, cleared as autovacuum would
  // have cleared it (these machines run PostgreSQL without autovacuum): a run never pays for the ones
  // before it.
  await sql`VACUUM (ANALYZE) call_placements, provider_events, orgs, call_status_counts, call_idempotency_keys`.execute(
    options.db,
  );
  const org = await createOrg(options.db, {
    name: `Bench provider placement ${randomUUID().slice(0, 8)}`,
    creditsPaise: 1_000_000_000,
    planId: 'bench',
  });
  const agent = await createAgent(options.db, {
    orgId: org.id,
    name: 'Bench Vapi agent',
    fromE164: '+918045678901',
    provider: 'vapi',
    providerSettings: { assistantId: 'bench-assistant', phoneNumberId: 'bench-phone-number' },
  });
  const { key } = await issueApiKey(options.db, org.id);
  let number = 0;
  // Each answered placement counted: its call id and latency at this client.
  const timed: Array<{ callId: string; latencyMs: number }> = [];
  let errors = 0;
  let answered = 0;
  const begin = performance.now();
  const countFrom = begin + options.warmupSec * 1000;
  const stopAt = countFrom + options.seconds * 1000;
  let cpuAtStart = NaN;
  const measuring = setTimeout(() => {
    cpuAtStart = options.serviceCpuMs();
    answered = 0;
  }, options.warmupSec * 1000);
  // undici's request over a pool of one connection per worker: the cheapest client at hand, so the
  // client's own CPU takes as little of the machine's cores from the service as it can.
  const dispatcher = new Agent({ connections: options.concurrency });
  const worker = async () => {
    while (performance.now() < stopAt) {
      const to = `+9195${String(number++).padStart(8, '0')}`;
      const started = performance.now();
      const response = await request(`${options.origin}/api/v1/calls`, {
        method: 'POST',
        dispatcher,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agent_id: agent.id, to_e164: to }),
      });
      const body = (await response.body.json()) as { data?: { id: string } };
      const latencyMs = performance.now() - started;
      answered += 1;
      if (started < countFrom) continue;
      if (response.statusCode !== 201 || !body.data) {
        errors += 1;
        continue;
      }
      timed.push({ callId: body.data.id, latencyMs });
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  clearTimeout(measuring);
  const serviceCpuMsPerPlacement = (options.serviceCpuMs() - cpuAtStart) / Math.max(1, answered);
  await dispatcher.close();
  const heldMs = await options.mock.heldMs();
  const overheads: number[] = [];
  const latencies: number[] = [];
  for (const { callId, latencyMs } of timed) {
    const held = heldMs.get(callId);
    if (held === undefined) {
      errors += 1;
      continue;
    }
    overheads.push(latencyMs - held);
    latencies.push(latencyMs);
  }
  overheads.sort((a, b) => a - b);
  latencies.sort((a, b) => a - b);
  return {
    providerLatencyMs: PROVIDER_LATENCY_MS,
    concurrency: options.concurrency,
    seconds: options.seconds,
    placements: overheads.length,
    errors,
    overheadP50: percentile(overheads, 0.5),
    overheadP99: percentile(overheads, 0.99),
    overheadMax: overheads.at(-1) ?? NaN,
    latencyP50: percentile(latencies, 0.5),
    latencyP99: percentile(latencies, 0.99),
    serviceCpuMsPerPlacement,
  };
}
