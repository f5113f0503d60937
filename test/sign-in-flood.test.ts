// Sign-in floods against the service as its own process (behind one trusted proxy, so X-Forwarded-For
// names each client), while another org uses the API. Judges behaviour only: the real sign-in from
// another address gets in, the other org's requests all succeed, the flood is answered 401 or 429 (with
// Retry-After), or 503 with Retry-After where a starved machine could not answer in time. It reports
// the figures of issue 38's targets (docs/benchmarks.md keeps them): the real sign-in's latency during
// each flood, the other org's API p99 idle and during the floods, and whether the right password signs
// in from a 21st address after 200 failures spread over 20. Each flood is the issue's: 150 wrong
// sign-ins, 32 at a time. The latency figures mean something on a quiet machine only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlan } from '../src/orgs/service.js';
import { acceptLink, inviteMember } from '../src/members/service.js';
import { createTestOrg, type TestOrg } from './support/app.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import {
  killServerProcesses,
  serverEnvironment,
  startServerProcess,
  type ServerProcess,
} from './support/server-process.js';

const PASSWORD = 'a password of some length';
const VICTIM = 'flooded-admin@example.com';
const IDLE_MS = 3_000;
const FLOOD_SIGN_INS = 150;
const FLOOD_CONNECTIONS = 32;
const API_CONNECTIONS = 4;

let database: TestDatabase;
let server: ServerProcess;
let other: TestOrg;

beforeAll(async () => {
  database = await createTestDatabase();
  await createPlan(database.db, { id: 'unmetered', name: 'Unmetered', rateLimitPerMinute: 1_000_000 });
  const victimOrg = await createTestOrg(database.db);
  other = await createTestOrg(database.db, { planId: 'unmetered' });
  const by = { actor: 'cli', address: null };
  const { token } = await inviteMember(database.db, { orgId: victimOrg.orgId, email: VICTIM, role: 'admin' }, by);
  await acceptLink(database.db, token, PASSWORD);
  server = await startServerProcess(
    await serverEnvironment(database.url, { LOG_LEVEL: 'warn', TRUST_PROXY_HOPS: '1' }),
    180_000,
  );
}, 240_000);

afterAll(async () => {
  await server?.stop('SIGTERM');
  killServerProcesses();
  await database?.drop();
});

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function signIn(password: string, address: string) {
  const response = await fetch(`${server.baseUrl}/dashboard/login`, {
    method: 'POST',
    headers: {
      Origin: server.baseUrl,
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Forwarded-For': address,
    },
    body: new URLSearchParams({ email: VICTIM, password }).toString(),
    redirect: 'manual',
  });
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after') };
}

/** The other org's API use until `until`: its latencies, and any answer that was not 200. */
async function otherOrgTraffic(until: () => boolean): Promise<{ latencies: number[]; failures: number[] }> {
  const latencies: number[] = [];
  const failures: number[] = [];
  await Promise.all(
    Array.from({ length: API_CONNECTIONS }, async () => {
      while (!until()) {
        const started = performance.now();
        const response = await fetch(`${server.apiUrl}/contacts?limit=20`, {
          headers: { Authorization: `Bearer ${other.key}`, 'X-Forwarded-For': '10.9.9.9' },
        });
        await response.arrayBuffer();
        latencies.push(performance.now() - started);
        if (response.status !== 200) failures.push(response.status);
      }
    }),
  );
  return { latencies, failures };
}

/**
 * Sends FLOOD_SIGN_INS wrong sign-ins, FLOOD_CONNECTIONS at a time (each from `floodAddress(i)`), beside
 * the other org's traffic; once the flood is under way, the right password from a fresh address,
 * retried when told to (Retry-After). The other org's traffic runs until both are over.
 */
async function floodPhase(floodAddress: (i: number) => string, realAddress: string) {
  let over = false;
  const statuses = new Map<number, number>();
  let missingRetryAfter = 0;
  let sent = 0;
  const traffic = otherOrgTraffic(() => over);
  const flood = Promise.all(
    Array.from({ length: FLOOD_CONNECTIONS }, async () => {
      while (sent < FLOOD_SIGN_INS) {
        const answer = await signIn(`wrong password ${sent}`, floodAddress((sent += 1)));
        statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
        if ((answer.status === 429 || answer.status === 503) && !answer.retryAfter) missingRetryAfter += 1;
      }
    }),
  );
  const realSignIn = (async () => {
    // In while the flood's first requests are still being answered.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const started = performance.now();
    let real = await signIn(PASSWORD, realAddress);
    let tries = 1;
    // Told to come back (429 while the hashing pool is full, or 503 past the request deadline on a
    // starved machine), a person signs in again after Retry-After, as the real sign-in does here.
    while ((real.status === 429 || real.status === 503) && real.retryAfter !== null && tries < 20) {
      await new Promise((resolve) => setTimeout(resolve, Number(real.retryAfter) * 1_000));
      real = await signIn(PASSWORD, realAddress);
      tries += 1;
    }
    return { real, tries, realMs: performance.now() - started };
  })();
  const [{ real, tries, realMs }] = await Promise.all([realSignIn, flood]);
  over = true;
  const { latencies, failures } = await traffic;
  return { real, realMs, tries, statuses, missingRetryAfter, sent, latencies, failures };
}

describe('sign-in floods', { timeout: 600_000 }, () => {
  it('let a real sign-in from another address in and leave another org its API', async () => {
    const idle = await (async () => {
      const end = Date.now() + IDLE_MS;
      return otherOrgTraffic(() => Date.now() >= end);
    })();
    expect(idle.failures).toEqual([]);
    const idleP99 = percentile(idle.latencies, 99);

    const phases = {
      'one address': await floodPhase(() => '198.51.100.7', '192.0.2.10'),
      'a new address each': await floodPhase((i) => `100.64.${(i >> 8) & 255}.${i & 255}`, '192.0.2.11'),
    };
    for (const [name, phase] of Object.entries(phases)) {
      const flood = [...phase.statuses].map(([status, count]) => `${count}×${status}`).join(', ');
      console.log(
        `sign-in flood from ${name}: ${phase.sent} wrong sign-ins at ${FLOOD_CONNECTIONS} at a time (${flood}); ` +
          `the right sign-in from another address: ${phase.real.status} after ${phase.realMs.toFixed(0)} ms ` +
          `(${phase.tries} tries); other org's API p99 ${percentile(phase.latencies, 99).toFixed(1)} ms ` +
          `(p95 ${percentile(phase.latencies, 95).toFixed(1)}) vs ${idleP99.toFixed(1)} ms idle ` +
          `(p95 ${percentile(idle.latencies, 95).toFixed(1)})`,
      );
      expect(phase.real.status).toBe(303);
      expect(phase.failures).toEqual([]);
      // The hashes run below the process's priority, so where other work starves the machine (the
      // suite's other files in CI), a wrong sign-in may pass the request deadline: a 503 to come back.
      expect([...phase.statuses.keys()].filter((status) => ![401, 429, 503].includes(status))).toEqual([]);
      expect(phase.missingRetryAfter).toBe(0);
    }
  });

  it('let the right password in from a 21st address after 200 failures over 20 addresses', async () => {
    const email = VICTIM;
    const statuses: number[] = [];
    const started = performance.now();
    // Four addresses at a time, each sending its ten failures one after another. A sign-in the hashing
    // pool has no place for (429 with Retry-After: 1, on a busy machine) is no failure: sent again.
    for (let group = 0; group < 20; group += 4) {
      const batch = await Promise.all(
        [0, 1, 2, 3].map(async (k) => {
          const seen: number[] = [];
          for (let i = 0; i < 10; i += 1) {
            let answer = await signIn(`wrong ${email} ${i}`, `203.0.113.${group + k + 1}`);
            while (answer.status === 429 && answer.retryAfter === '1') {
              await new Promise((resolve) => setTimeout(resolve, 1_000));
              answer = await signIn(`wrong ${email} ${i}`, `203.0.113.${group + k + 1}`);
            }
            seen.push(answer.status);
          }
          return seen;
        }),
      );
      statuses.push(...batch.flat());
    }
    const right = await signIn(PASSWORD, '203.0.113.21');
    console.log(
      `after ${statuses.filter((status) => status === 401).length} failures over 20 addresses ` +
        `(${((performance.now() - started) / 1000).toFixed(0)} s), the right password from a 21st: ${right.status}`,
    );
    expect(statuses.filter((status) => status !== 401)).toEqual([]);
    expect(right.status).toBe(303);
  });
});
