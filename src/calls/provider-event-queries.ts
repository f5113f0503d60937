// SQL for provider_events: each provider report stored once under its key, and the reports still
// waiting for their call.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database/connect.js';
import type { ProviderEventsTable } from '../../db/schema.js';
import type { InboundEvent, ProviderEvent } from './provider/types.js';

/** A stored provider report. */
export type StoredProviderEvent = Selectable<ProviderEventsTable>;

/** Stores a report unless one with its key is stored already; returns its row id, or null for a duplicate. */
export async function insertProviderEvent(
  db: Db,
  row: { provider: string; event: InboundEvent; receivedAt: Date },
): Promise<number | null> {
  const inserted = await db
    .insertInto('provider_events')
    .values({
      provider: row.provider,
      dedupe_key: row.event.dedupeKey,
      call_id: row.event.callId,
      provider_call_id: row.event.providerCallId,
      event: JSON.stringify(row.event.event),
      received_at: row.receivedAt,
    })
    .onConflict((oc) => oc.columns(['provider', 'dedupe_key']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted?.id ?? null;
}

/** Marks stored reports applied to `callId` at `at`. */
export async function markProviderEventsApplied(db: Db, ids: number[], callId: string, at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('provider_events').set({ applied_at: at, call_id: callId }).where('id', 'in', ids).execute();
}

/** Reports of `provider` still waiting that name the call by our id or by the provider's, oldest first. */
export async function waitingProviderEvents(
  db: Db,
  provider: string,
  call: { id: string; providerCallId: string },
): Promise<StoredProviderEvent[]> {
  return db
    .selectFrom('provider_events')
    .selectAll()
    .where('provider', '=', provider)
    .where('applied_at', 'is', null)
    .where((eb) => eb.or([eb('call_id', '=', call.id), eb('provider_call_id', '=', call.providerCallId)]))
    .orderBy('id')
    .execute();
}

/** The event a stored report carries, its times revived. */
export function storedEvent(row: StoredProviderEvent): ProviderEvent {
  const event = row.event as ProviderEvent & { at: string };
  return { ...event, at: new Date(event.at) };
}

/**
 * Takes a transaction-scoped lock on one provider call id: a report naming it and the placement that
 * records it never interleave, so no report is held after the placement looked for held ones.
 */
export async function lockProviderCallId(db: Db, provider: string, providerCallId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`${provider}:${providerCallId}`}, 0))`.execute(db);
}

/** Deletes up to `limit` reports received before `before`; returns how many. */
export async function deleteOldProviderEvents(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM provider_events WHERE id IN (
      SELECT id FROM provider_events WHERE received_at < ${before} LIMIT ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
