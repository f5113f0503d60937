// SQL for the record of a CSV import: claimed once per org, advanced with each committed batch, ended
// as done (with the batch that finishes it) or failed.
import { sql } from 'kysely';
import type { Db } from '../database/connect.js';

/** Where an import is: counts so far and how it ended. */
export type ImportRecord = Awaited<ReturnType<typeof findImport>> & object;

/** What a committed batch (or the whole import) adds up to. */
export interface ImportProgress {
  rowsCommitted: number;
  lastLineCommitted: number;
  created: number;
  updated: number;
  rejected: number;
}

/**
 * Starts a running import for the org, first ending as failed a running one whose heartbeat is older
 * than `staleMs` (its process stopped). Returns the new id, or the running import that holds the org.
 * Run it in a transaction (with the import's audit entry).
 */
export async function claimImport(
  db: Db,
  orgId: string,
  source: 'dashboard' | 'cli',
  staleMs: number,
): Promise<{ id: string } | { running: { id: string; started_at: Date; rows_committed: number } | undefined }> {
  await db
    .updateTable('contact_imports')
    .set({
      status: 'failed',
      reason: 'the process running it stopped answering',
      finished_at: sql<Date>`now()`,
    })
    .where('org_id', '=', orgId)
    .where('status', '=', 'running')
    .where('heartbeat_at', '<', sql<Date>`now() - make_interval(secs => ${staleMs / 1000})`)
    .execute();
  const inserted = await db
    .insertInto('contact_imports')
    .values({ org_id: orgId, source, status: 'running' })
    .onConflict((conflict) =>
      conflict
        .column('org_id')
        .where(sql<boolean>`status = 'running'`)
        .doNothing(),
    )
    .returning('id')
    .executeTakeFirst();
  if (inserted) return inserted;
  const running = await db
    .selectFrom('contact_imports')
    .select(['id', 'started_at', 'rows_committed'])
    .where('org_id', '=', orgId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  // Undefined when the running import ended in between: the org was busy a moment ago all the same.
  return { running };
}

/**
 * Records a batch's progress (and the heartbeat) inside its transaction; false when the import is no
 * longer running (another process ended it as abandoned), so the batch must not commit.
 */
export async function recordProgress(trx: Db, id: string, progress: ImportProgress): Promise<boolean> {
  const result = await trx
    .updateTable('contact_imports')
    .set({
      rows_committed: progress.rowsCommitted,
      last_line_committed: progress.lastLineCommitted,
      created: progress.created,
      updated: progress.updated,
      rejected: progress.rejected,
      heartbeat_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Ends the import: done with its final counts and listed rejections, or failed with a reason. */
export async function endImport(
  db: Db,
  id: string,
  end: { status: 'done' } | { status: 'failed'; reason: string },
  rejections: unknown[],
): Promise<void> {
  await db
    .updateTable('contact_imports')
    .set({
      status: end.status,
      reason: end.status === 'failed' ? end.reason : null,
      rejections: JSON.stringify(rejections),
      finished_at: sql<Date>`now()`,
    })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute();
}

/** The org's import with this id, or undefined (also for another org's import). */
export async function findImport(db: Db, orgId: string, id: string) {
  return db
    .selectFrom('contact_imports')
    .select([
      'id',
      'source',
      'status',
      'rows_committed',
      'last_line_committed',
      'created',
      'updated',
      'rejected',
      'rejections',
      'reason',
      'started_at',
      'finished_at',
    ])
    .where('org_id', '=', orgId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** The org's running import whose heartbeat is fresher than `staleMs`, or undefined. */
export async function findRunningImport(db: Db, orgId: string, staleMs: number) {
  return db
    .selectFrom('contact_imports')
    .select(['id', 'started_at', 'rows_committed'])
    .where('org_id', '=', orgId)
    .where('status', '=', 'running')
    .where('heartbeat_at', '>=', sql<Date>`now() - make_interval(secs => ${staleMs / 1000})`)
    .executeTakeFirst();
}

/** Deletes up to `limit` ended imports that finished before `before`; returns how many went. */
export async function deleteEndedImports(db: Db, before: Date, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('contact_imports')
    .where('id', 'in', (sub) =>
      sub
        .selectFrom('contact_imports')
        .select('id')
        .where('status', '<>', 'running')
        .where('finished_at', '<', before)
        .limit(limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
