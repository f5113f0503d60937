// The attacker of the sign-in flood phase (./sign-in-flood.ts), in a process of its own so that its
// HTTP client never shares an event loop with the measuring one. Takes a JSON plan as its argument, runs
// the plan's rounds one after another and prints one JSON line per round (see FloodRound), then `done`.
// Each round is issue 38's flood: FLOOD_SIGN_INS wrong sign-ins, FLOOD_CONNECTIONS at a time, from one
// address or from a new address each; 20 ms in, the right password from a fresh address, tried again
// whenever the answer is 429 with `Retry-After: 1`.
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';

/** What the parent asks for. */
export interface FloodPlan {
  origin: string;
  email: string;
  password: string;
  /** The rounds' kinds, in order. */
  kinds: FloodKind[];
  /** The pause after each round, so that rounds never overlap the next one's measurement. */
  gapMs: number;
}

/** Where a round's wrong sign-ins come from. */
export type FloodKind = 'one address' | 'a new address each';

/** One round as the flooder saw it; times are epoch milliseconds. */
export interface FloodRound {
  kind: FloodKind;
  startedAt: number;
  endedAt: number;
  /** How many wrong sign-ins got each status. */
  statuses: Record<string, number>;
  /** 429s without a Retry-After header. */
  missingRetryAfter: number;
  /** The right sign-in: its final status, how long it took until then, and its tries. */
  real: { status: number; ms: number; tries: number };
}

const FLOOD_SIGN_INS = 150;
const FLOOD_CONNECTIONS = 32;
/** When the right sign-in starts, after its round's flood. */
const REAL_SIGN_IN_AFTER_MS = 20;

async function signIn(plan: FloodPlan, password: string, address: string) {
  const { statusCode, headers, body } = await request(`${plan.origin}/dashboard/login`, {
    method: 'POST',
    headers: {
      origin: plan.origin,
      'content-type': 'application/x-www-form-urlencoded',
      'x-forwarded-for': address,
    },
    body: new URLSearchParams({ email: plan.email, password }).toString(),
  });
  await body.dump();
  return { status: statusCode, retryAfter: headers['retry-after'] };
}

async function round(plan: FloodPlan, kind: FloodKind, index: number): Promise<FloodRound> {
  const floodAddress = (i: number) => (kind === 'one address' ? `198.51.${index}.7` : `100.64.${index}.${i}`);
  const statuses: Record<string, number> = {};
  let missingRetryAfter = 0;
  let sent = 0;
  const startedAt = Date.now();
  const flood = Promise.all(
    Array.from({ length: FLOOD_CONNECTIONS }, async () => {
      while (sent < FLOOD_SIGN_INS) {
        sent += 1;
        const answer = await signIn(plan, `wrong password ${sent}`, floodAddress(sent));
        statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
        if (answer.status === 429 && answer.retryAfter === undefined) missingRetryAfter += 1;
      }
    }),
  );
  const real = (async () => {
    await sleep(REAL_SIGN_IN_AFTER_MS);
    const started = Date.now();
    let answer = await signIn(plan, plan.password, `192.0.${index}.10`);
    let tries = 1;
    while (answer.status === 429 && answer.retryAfter === '1' && tries < 20) {
      await sleep(1_000);
      answer = await signIn(plan, plan.password, `192.0.${index}.10`);
      tries += 1;
    }
    return { status: answer.status, ms: Date.now() - started, tries };
  })();
  const [answer] = await Promise.all([real, flood]);
  return { kind, startedAt, endedAt: Date.now(), statuses, missingRetryAfter, real: answer };
}

async function main(): Promise<void> {
  // The attacker's client stands for another machine's: here it yields the shared cores to the service.
  os.setPriority(19);
  const plan = JSON.parse(process.argv[2] ?? '') as FloodPlan;
  for (const [index, kind] of plan.kinds.entries()) {
    process.stdout.write(`${JSON.stringify(await round(plan, kind, index))}\n`);
    await sleep(plan.gapMs);
  }
  process.stdout.write('done\n');
}

await main();
