// Helpers for the calls tests: bounded polling, test numbers, and direct reads of ledger and events.
import { randomInt } from 'node:crypto';
import { sql } from 'kysely';
import type { Client } from 'openapi-fetch';
import type { components, paths } from '../../generated/openapi.js';
import type { Db } from '../../src/database/connect.js';

type CallDetail = components['schemas']['CallDetail'];

const TERMINAL = new Set(['completed', 'failed', 'no_answer', 'busy', 'canceled']);

/** Polls `probe` until it returns a truthy value; fails after `timeoutMs` with `what` in the message. */
export async function waitFor<T>(
  what: string,
  probe: () => T | null | undefined | false | Promise<T | null | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A fresh E.164 test number ending in `last4` (the simulator's outcome selector). */
export function testNumber(last4: string): string {
  return `+91987${String(randomInt(1000)).padStart(3, '0')}${last4}`;
}

/** Fetches a call's detail through the API; throws on any error answer. */
export async function fetchCall(client: Client<paths>, id: string): Promise<CallDetail> {
  const { data, error } = await client.GET('/calls/{id}', { params: { path: { id } } });
  if (!data) throw new Error(`GET /calls/${id} failed: ${JSON.stringify(error)}`);
  return data.data;
}

/**
 * Waits until a call reaches `status` (any terminal status when omitted), watching the database so
 * polling does not spend the org's rate limit, then returns its detail as the API serves it.
 */
export async function waitForCall(db: Db, client: Client<paths>, id: string, status?: string, timeoutMs = 30_000) {
  await waitFor(
    `call ${id} to reach ${status ?? 'a terminal status'}`,
    async () => {
      const row = await db.selectFrom('calls').select('status').where('id', '=', id).executeTakeFirstOrThrow();
      return status ? row.status === status : TERMINAL.has(row.status);
    },
    timeoutMs,
  );
  return fetchCall(client, id);
}

/** The ledger rows of one call, oldest first. */
export async function ledgerOfCall(db: Db, callId: string) {
  return db
    .selectFrom('credit_ledger')
    .select(['kind', 'amount_paise'])
    .where('call_id', '=', callId)
    .orderBy('id')
    .execute();
}

/** The events recorded about one call. */
export async function eventsOfCall(db: Db, callId: string) {
  return db
    .selectFrom('events')
    .select(['id', 'kind', 'data', 'org_id'])
    .where(sql<string>`data->>'call_id'`, '=', callId)
    .orderBy('created_at')
    .execute();
}

/** How many calls an org has in the database, whatever the API says. */
export async function countCallRows(db: Db, orgId: string): Promise<number> {
  const row = await db
    .selectFrom('calls')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('org_id', '=', orgId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
