// The server process killed with SIGKILL in the middle of calls and deliveries, twice, then started
// again: every committed event reaches every subscribed receiver at least once (counted by event id),
// no call is left unfinished, each call has exactly one ending event, and the ledger adds up.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { balanceAndLedgerSum } from '../src/orgs/queries.js';
import { createTestOrg, type TestOrg } from './support/app.js';
import { testNumber, waitFor } from './support/calls.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import {
  killServerProcesses,
  serverEnvironment,
  startServerProcess,
  type ServerProcess,
} from './support/server-process.js';
import { slowly, startReceiver, type Receiver } from './support/webhook-receiver.js';
import { parseJson } from './support/json.js';

const KILLS = 2;
const CREDITS = 10_000_000;
const EVENTS = ['call.completed', 'call.failed', 'call.no_answer', 'call.busy', 'call.canceled', 'contact.created'];
const ENDINGS = ['7777', '0001', '0002', '0003', '0004', '4321'];
const TERMINAL = ['completed', 'failed', 'no_answer', 'busy', 'canceled'];

let database: TestDatabase;
let org: TestOrg;
const receivers: Receiver[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  org = await createTestOrg(database.db, { planId: 'scale', credits: CREDITS });
  // Slow answers, so deliveries are in flight when the server dies.
  receivers.push(await startReceiver(slowly(20)), await startReceiver(slowly(400)));
});

afterAll(async () => {
  killServerProcesses();
  await Promise.all(receivers.map((receiver) => receiver.close()));
  await database?.drop();
});

/** Sends calls and contacts to `server` until `stop` resolves; requests cut by the kill are expected. */
async function traffic(server: ServerProcess, stop: Promise<void>): Promise<number> {
  let sent = 0;
  let stopped = false;
  void stop.then(() => (stopped = true));
  const lane = async (lane: number) => {
    for (let i = 0; !stopped; i += 1) {
      const body =
        (i + lane) % 3 === 0
          ? {
              path: '/contacts',
              json: { phone_e164: testNumber(String(1000 + ((i * 7 + lane) % 9000))), consent_capture: 'manual' },
            }
          : {
              path: '/calls',
              json: { agent_id: org.agentId, to_e164: testNumber(ENDINGS[(i + lane) % ENDINGS.length]!) },
            };
      await fetch(`${server.apiUrl}${body.path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body.json),
        signal: AbortSignal.timeout(5_000),
      }).then(
        () => (sent += 1),
        () => undefined,
      );
    }
  };
  await Promise.all([0, 1, 2, 3].map(lane));
  return sent;
}

async function start(): Promise<ServerProcess> {
  return startServerProcess(await serverEnvironment(database.url, { SIMULATOR_STEP_MS: '40', LOG_LEVEL: 'warn' }));
}

describe('SIGKILL in the middle of calls and deliveries', () => {
  it('loses no event and leaves no call unfinished after a restart', { timeout: 240_000 }, async () => {
    let server = await start();
    for (const receiver of receivers) {
      const response = await fetch(`${server.apiUrl}/webhooks`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, events: EVENTS }),
      });
      expect(response.status).toBe(201);
    }

    const atKill: Array<{ unfinishedCalls: number; deliveriesInFlight: number; deliveriesDue: number }> = [];
    for (let kill = 0; kill < KILLS; kill += 1) {
      // Traffic until calls are under way and deliveries are in flight, then SIGKILL mid-traffic.
      let killNow!: () => void;
      const killed = new Promise<void>((resolve) => (killNow = resolve));
      const roundStart = new Date();
      const sending = traffic(server, killed);
      await waitFor(
        'calls of this round in flight and their deliveries being sent',
        async () => {
          const { rows } = await sql<{ unfinished: number; leased: number }>`
          SELECT (SELECT count(*)::int FROM calls WHERE status NOT IN ('completed','failed','no_answer','busy','canceled')
                    AND created_at >= ${roundStart}) AS unfinished,
                 (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending' AND lease_expires_at > now()
                    AND created_at >= ${roundStart}) AS leased`.execute(database.db);
          return rows[0]!.unfinished >= 10 && rows[0]!.leased >= 3;
        },
        20_000,
      );
      await server.stop('SIGKILL');
      killNow();
      expect(await sending).toBeGreaterThan(0);
      const { rows } = await sql<{ unfinished: number; leased: number; due: number }>`
        SELECT (SELECT count(*)::int FROM calls WHERE status NOT IN ('completed','failed','no_answer','busy','canceled')) AS unfinished,
               (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending' AND lease_expires_at > now()) AS leased,
               (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS due`.execute(database.db);
      atKill.push({
        unfinishedCalls: rows[0]!.unfinished,
        deliveriesInFlight: rows[0]!.leased,
        deliveriesDue: rows[0]!.due,
      });
      expect(rows[0]!.unfinished).toBeGreaterThan(0);
      // The dead process's claims would lapse after their 60-second lease; move that moment to now
      // (test/webhooks-isolation.test.ts proves a lapsed lease is taken over).
      await sql`UPDATE webhook_deliveries SET lease_expires_at = now() WHERE lease_expires_at > now()`.execute(
        database.db,
      );
      server = await start();
    }

    await waitFor(
      'every call to end',
      async () => {
        const open = await database.db
          .selectFrom('calls')
          .select('id')
          .where('status', 'not in', TERMINAL as never)
          .execute();
        return open.length === 0;
      },
      40_000,
    );
    const events = await database.db
      .selectFrom('events')
      .select(['id', 'kind', 'data'])
      .where('org_id', '=', org.orgId)
      .execute();
    const missing = () => {
      const lost = receivers.map((receiver) => {
        const received = new Set(receiver.requests.map((request) => parseJson<{ id: string }>(request.rawBody).id));
        return events.filter((event) => !received.has(event.id)).length;
      });
      return lost.every((count) => count === 0) ? lost : null;
    };
    // A placement killed between its two transactions holds its credits until a worker settles it, once
    // its request to the provider can no longer be under way (PROVIDER_TIMEOUT_MS and a grace).
    await waitFor(
      'every placement a killed process left to be settled',
      async () => (await database.db.selectFrom('call_placements').select('id').execute()).length === 0,
      40_000,
    );
    await waitFor('every event at every receiver', () => missing(), 40_000);
    await server.stop('SIGTERM');

    const calls = await database.db
      .selectFrom('calls')
      .select(['id', 'status'])
      .where('org_id', '=', org.orgId)
      .execute();
    // One ending event per call, of its final status (call.canceled never happens here).
    for (const call of calls) {
      const endings = events.filter((event) => (event.data as { call_id?: string }).call_id === call.id);
      expect(
        endings.map((event) => event.kind),
        call.id,
      ).toEqual([`call.${call.status}`]);
    }
    const charged = await database.db
      .selectFrom('calls')
      .select(sql<number>`coalesce(sum(credits_debited_paise), 0)`.as('sum'))
      .where('org_id', '=', org.orgId)
      .executeTakeFirstOrThrow();
    expect(await balanceAndLedgerSum(database.db, org.orgId)).toEqual({
      balance: CREDITS - Number(charged.sum),
      ledgerSum: CREDITS - Number(charged.sum),
    });
    const undelivered = await database.db
      .selectFrom('webhook_deliveries')
      .select('status')
      .where('status', '!=', 'succeeded')
      .execute();
    expect(undelivered).toEqual([]);

    const received = receivers.reduce((sum, receiver) => sum + receiver.requests.length, 0);
    console.info(
      `SIGKILL x${KILLS}: ${calls.length} calls (0 unfinished), ${events.length} events to ${receivers.length} receivers, ` +
        `${received} requests received (${received - events.length * receivers.length} duplicates), 0 lost; at each kill: ${JSON.stringify(atKill)}`,
    );
  });
});
