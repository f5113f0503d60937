// SQL for the timeline entries of calls.
import { sql, type Insertable, type Selectable } from 'kysely';
import type { Db } from '../database/connect.js';
import { prepareQuery, type Arg } from '../database/prepared-query.js';
import type { CallTimelineTable } from '../../db/schema.js';
import type { components } from '../../generated/openapi.js';

type TimelineEntry = components['schemas']['TimelineEntry'];

/** One entry to append: its kind and that kind's detail, as the spec pairs them. */
export type TimelineInsert = Omit<Insertable<CallTimelineTable>, 'kind' | 'detail'> &
  (TimelineEntry extends infer E ? (E extends TimelineEntry ? Pick<E, 'kind' | 'detail'> : never) : never);

/** A stored entry as the API shows it. Rows are written only as TimelineInsert values (here, or with their call by db/functions/record_placed_calls.sql), so kind and detail match. */
export function toTimelineEntry(row: Pick<Selectable<CallTimelineTable>, 'at' | 'kind' | 'detail'>): TimelineEntry {
  return { at: row.at.toISOString(), kind: row.kind, detail: row.detail } as TimelineEntry;
}

/** Appends entries to calls' timelines in one statement, in order. */
export async function insertTimelineEntries(db: Db, entries: readonly TimelineInsert[]): Promise<void> {
  if (entries.length === 0) return;
  await db
    .insertInto('call_timeline')
    .values(entries.map((entry) => ({ ...entry, detail: JSON.stringify(entry.detail) })))
    .execute();
}

/** A call's timeline, oldest first. */
export async function listTimeline(db: Db, callId: string) {
  return timelineOfCall.execute(db, { callId });
}

const timelineOfCall = prepareQuery((db, arg: Arg<{ callId: string }>) =>
  db
    .selectFrom('call_timeline')
    .select(['at', 'kind', 'detail'])
    .where('call_id', '=', arg('callId'))
    .orderBy('at')
    .orderBy('id'),
);

/** Deletes up to `limit` timeline entries from before `before`; returns how many. */
export async function deleteOldTimelineEntries(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM call_timeline WHERE id IN (SELECT id FROM call_timeline WHERE at < ${before} LIMIT ${limit})`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0);
}
