// SQL for provider_events: each provider report stored once under its key, and the reports still
// waiting for their call.
import { sql, type Selectable } from 'kysely';
import type { Db } from '../database/connect.js';
import { prepareQuery, type Arg } from '../database/prepared-query.js';
import type { ProviderEventsTable } from '../../db/schema.js';
import type { InboundEvent, ProviderEvent } from './provider/types.js';

/** A stored provider report. */
export type StoredProviderEvent = Selectable<ProviderEventsTable>;

/** A report to store, and the call it is applied to at once (null: found, or held, afterwards). */
export interface ReportToStore {
  event: InboundEvent;
  appliedTo: string | null;
}

/**
 * The reports' insert as one statement text whatever their number (each column an array), so that it is
 * prepared once per connection: a VALUES list of one row per report was a new statement for each count,
 * planned again on every run (docs/benchmarks.md has what that cost).
 */
const insertReports = prepareQuery(
  (
    _db,
    arg: Arg<{
      provider: string;
      receivedAt: Date;
      keys: string[];
      callIds: Array<string | null>;
      providerCallIds: Array<string | null>;
      events: string[];
      applied: boolean[];
    }>,
  ) => sql<{ id: number; dedupe_key: string }>`
    INSERT INTO provider_events (provider, dedupe_key, call_id, provider_call_id, event, received_at, applied_at)
    SELECT ${arg('provider')}, r.dedupe_key, r.call_id, r.provider_call_id, r.event, ${arg('receivedAt')}::timestamptz,
           CASE WHEN r.applied THEN ${arg('receivedAt')}::timestamptz END
    FROM unnest(${arg('keys')}::text[], ${arg('callIds')}::uuid[], ${arg('providerCallIds')}::text[],
                ${arg('events')}::jsonb[], ${arg('applied')}::boolean[])
         AS r(dedupe_key, call_id, provider_call_id, event, applied)
    ON CONFLICT (provider, dedupe_key) DO NOTHING
    RETURNING id, dedupe_key`,
);

/**
 * Stores the reports whose keys are not stored yet, in one statement (a report applied at once is
 * stored as applied to its call at `receivedAt`); returns the new rows' ids by key. A key stored
 * before, or repeated in `reports`, is absent from the map or maps to its first report's row.
 */
export async function insertProviderEvents(
  db: Db,
  provider: string,
  reports: readonly ReportToStore[],
  receivedAt: Date,
): Promise<Map<string, number>> {
  if (reports.length === 0) return new Map();
  const inserted = await insertReports.execute(db, {
    provider,
    receivedAt,
    keys: reports.map(({ event }) => event.dedupeKey),
    callIds: reports.map(({ event, appliedTo }) => appliedTo ?? event.callId),
    providerCallIds: reports.map(({ event }) => event.providerCallId),
    events: reports.map(({ event }) => JSON.stringify(event.event)),
    applied: reports.map(({ appliedTo }) => appliedTo !== null),
  });
  return new Map(inserted.map((row) => [row.dedupe_key, row.id]));
}

/** Marks stored reports applied to `callId` at `at`. */
export async function markProviderEventsApplied(db: Db, ids: number[], callId: string, at: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('provider_events').set({ applied_at: at, call_id: callId }).where('id', 'in', ids).execute();
}

/** Reports of `provider` still waiting that name one of `calls` by our id or by the provider's, oldest first. */
export async function waitingProviderEvents(
  db: Db,
  provider: string,
  calls: ReadonlyArray<{ id: string; providerCallId: string }>,
): Promise<StoredProviderEvent[]> {
  if (calls.length === 0) return [];
  const callIds = calls.map((call) => call.id);
  const providerCallIds = calls.map((call) => call.providerCallId);
  return db
    .selectFrom('provider_events')
    .selectAll()
    .where('provider', '=', provider)
    .where('applied_at', 'is', null)
    .where((eb) => eb.or([eb('call_id', 'in', callIds), eb('provider_call_id', 'in', providerCallIds)]))
    .orderBy('id')
    .execute();
}

/** The event a stored report carries, its times revived. */
export function storedEvent(row: StoredProviderEvent): ProviderEvent {
  const event = row.event as ProviderEvent & { at: string };
  return { ...event, at: new Date(event.at) };
}

/** The keys of provider call ids' locks, in the order every taker locks them (see lockProviderCallIds). */
export function providerCallLockKeys(provider: string, providerCallIds: readonly string[]): string[] {
  return [...new Set(providerCallIds.map((id) => `${provider}:${id}`))].sort();
}

/**
 * Takes transaction-scoped locks on provider call ids, in one statement and in sorted order (two such
 * calls never deadlock): a report naming an id and the placement that records it never interleave, so no
 * report is held after the placement looked for held ones.
 */
export async function lockProviderCallIds(db: Db, provider: string, providerCallIds: readonly string[]): Promise<void> {
  if (providerCallIds.length === 0) return;
  const keys = providerCallLockKeys(provider, providerCallIds);
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(key, 0))
    FROM unnest(${keys}::text[]) WITH ORDINALITY AS keys(key, position) ORDER BY position`.execute(db);
}

/** Deletes up to `limit` reports received before `before`; returns how many. */
export async function deleteOldProviderEvents(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM provider_events WHERE id IN (
      SELECT id FROM provider_events WHERE received_at < ${before} LIMIT ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
