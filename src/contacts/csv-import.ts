// CSV contact import in batches. The file is checked whole before anything is written; the org's one
// running import is claimed with the audit entry (a second import of the org is refused at once); then
// each IMPORT_BATCH_SIZE rows commit in their own short transaction with their contact.created events
// and the import's progress, so no pool connection is held for longer than one batch. A failure keeps
// the batches already committed, ends the import as failed with its reason, counts and logs it.
import type { Logger } from 'pino';
import type { Db } from '../database/connect.js';
import { recordAudit, type AuditEntry } from '../audit/service.js';
import { DomainError } from '../errors.js';
import type { Metrics } from '../observability/metrics.js';
import { emitEvents } from '../webhooks/outbox.js';
import { checkFile, ImportFileError, readRows, type RowError } from './csv-rows.js';
import { IMPORT_BATCH_SIZE, IMPORT_STALE_MS, MAX_LISTED_REJECTIONS } from './policy.js';
import * as records from './import-records.js';
import * as contacts from './queries.js';

/** What an import did: rows read = created + updated + rejected. */
export interface ImportSummary {
  rows: number;
  created: number;
  updated: number;
  rejected: number;
  /** The first rejected rows, by line number, each with the error object the API would answer. */
  rejections: Array<{ line: number; error: RowError }>;
}

/** What an import needs: the database, the logger its failures go to, and optionally the metrics. */
export interface ImportDeps {
  db: Db;
  logger: Logger;
  metrics?: Pick<Metrics, 'contactImports'>;
}

/** Where an import comes from, how it reports progress, its audit entry and when it must stop. */
export interface ImportOptions {
  source: 'dashboard' | 'cli';
  /** Called every 10,000 rows read. */
  onProgress?: (rowsRead: number) => void;
  /** The audit entry of the import (given its id), written with its claim, before any row. */
  audit?: (importId: string) => AuditEntry;
  /** When aborted, the import stops before its next batch and is recorded as failed. */
  signal?: AbortSignal;
}

/** An import whose file was checked and whose org was claimed; run() imports the rows. */
export interface StartedImport {
  id: string;
  /** Imports the rows; rejects (after logging and recording the failure) when the import fails. */
  run(): Promise<ImportSummary>;
}

/**
 * An import that failed part-way: its committed batches are stored; the message says through which
 * line and how to finish. The original error is the cause.
 */
export class ImportFailedError extends Error {}

/** The import was stopped because its process is shutting down. */
class ImportStopped extends Error {}

function importRunning(running: { id: string; started_at: Date; rows_committed: number } | undefined): DomainError {
  const which = running
    ? ` (import ${running.id}, started ${running.started_at.toISOString()}, ${running.rows_committed} rows stored so far)`
    : '';
  return new DomainError(
    'invalid_state',
    `Another contact import of this organisation is running${which}; one runs at a time. Wait for it to end, then import again.`,
  );
}

async function writeBatch(
  trx: Db,
  orgId: string,
  rows: contacts.ImportRow[],
): Promise<{ created: number; updated: number }> {
  const inserted = await contacts.insertNewContacts(trx, orgId, rows);
  await emitEvents(
    trx,
    orgId,
    'contact.created',
    inserted.map((row) => ({
      contact_id: row.id,
      phone_e164: row.phone_e164,
      name: row.name,
      consent_capture: row.consent_capture,
    })),
    null,
  );
  const insertedPhones = new Set(inserted.map((row) => row.phone_e164));
  const updated = await contacts.updateExistingContacts(
    trx,
    orgId,
    rows.filter((row) => !insertedPhones.has(row.phone_e164)),
  );
  return { created: inserted.length, updated };
}

/** The reason recorded for the org to read: the error's own words only when meant for a client. */
function reasonOf(error: unknown, id: string): string {
  if (error instanceof ImportStopped) return 'the server was stopped before the import ended';
  if (error instanceof DomainError) return error.message;
  return `an unexpected error; the operator's log has the details (import ${id})`;
}

/** Reads the rows and commits them batch by batch; see startImport. */
async function runImport(
  deps: ImportDeps,
  orgId: string,
  file: string,
  id: string,
  options: ImportOptions,
): Promise<ImportSummary> {
  const { onProgress = () => undefined, signal } = options;
  const summary: ImportSummary = { rows: 0, created: 0, updated: 0, rejected: 0, rejections: [] };
  const committed = { rows: 0, line: 1 };
  let batch: contacts.ImportRow[] = [];
  let lastLine = 1;
  const commit = async (last: boolean) => {
    if (signal?.aborted) throw new ImportStopped();
    const progress = await deps.db.transaction().execute(async (trx) => {
      const written = await writeBatch(trx, orgId, batch);
      const progress = {
        rowsCommitted: summary.rows,
        lastLineCommitted: lastLine,
        created: summary.created + written.created,
        updated: summary.updated + written.updated,
        rejected: summary.rejected,
      };
      if (!(await records.recordProgress(trx, id, progress))) {
        throw new Error(`import ${id} was ended by another process while it ran (it seemed abandoned)`);
      }
      if (last) await records.endImport(trx, id, { status: 'done' }, summary.rejections);
      return progress;
    });
    summary.created = progress.created;
    summary.updated = progress.updated;
    committed.rows = summary.rows;
    committed.line = lastLine;
    batch = [];
  };
  try {
    for await (const { line, result } of readRows(file)) {
      summary.rows += 1;
      lastLine = line;
      if ('row' in result) {
        batch.push(result.row);
      } else {
        summary.rejected += 1;
        if (summary.rejections.length < MAX_LISTED_REJECTIONS) summary.rejections.push({ line, error: result.error });
      }
      if (summary.rows - committed.rows >= IMPORT_BATCH_SIZE) await commit(false);
      if (summary.rows % 10_000 === 0) onProgress(summary.rows);
    }
    await commit(true);
  } catch (error) {
    const reason = await recordFailure(deps, { orgId, id, error, summary, committed });
    const detail = error instanceof ImportStopped || error instanceof DomainError ? reason : String(error);
    throw new ImportFailedError(
      `import ${id} failed after storing the rows through line ${committed.line} (${committed.rows} rows read): ${detail}. ` +
        'Import the same file again to finish: stored numbers are matched and counted as updated, and no contact.created event is sent twice.',
      { cause: error },
    );
  }
  deps.metrics?.contactImports.inc({ outcome: 'done' });
  return summary;
}

/** Logs and counts a failed import and ends its record as failed; returns the reason recorded. */
async function recordFailure(
  deps: ImportDeps,
  failed: {
    orgId: string;
    id: string;
    error: unknown;
    summary: ImportSummary;
    committed: { rows: number; line: number };
  },
): Promise<string> {
  const { orgId, id, error, summary, committed } = failed;
  const reason = reasonOf(error, id);
  deps.metrics?.contactImports.inc({ outcome: 'failed' });
  deps.logger.error(
    {
      err: error,
      org: orgId,
      import: id,
      rows_read: summary.rows,
      rows_committed: committed.rows,
      last_line_committed: committed.line,
      reason,
    },
    'contact import failed: the rows of its committed batches are stored, the rest are not',
  );
  const rejections = summary.rejections.filter((rejection) => rejection.line <= committed.line);
  try {
    await records.endImport(deps.db, id, { status: 'failed', reason }, rejections);
  } catch (recordError) {
    deps.logger.error(
      { err: recordError, org: orgId, import: id },
      'could not record the failed contact import; it ends as failed once its heartbeat is stale',
    );
  }
  return reason;
}

/**
 * Throws invalid_state at once when the org already runs an import: a cheap look before the file is
 * checked (startImport's claim stays what decides).
 */
export async function refuseIfRunning(deps: ImportDeps, orgId: string): Promise<void> {
  const running = await records.findRunningImport(deps.db, orgId, IMPORT_STALE_MS);
  if (!running) return;
  deps.metrics?.contactImports.inc({ outcome: 'refused' });
  deps.logger.info({ org: orgId, running: running.id }, 'contact import refused: another one is running');
  throw importRunning(running);
}

/** Checks the whole file before anything is written; throws ImportFileError (and logs it) when it cannot be imported. */
export async function checkImportFile(deps: ImportDeps, orgId: string, file: string): Promise<void> {
  try {
    await checkFile(file);
  } catch (error) {
    if (error instanceof ImportFileError) {
      deps.logger.info({ org: orgId, reason: error.message }, 'contact import refused: the file cannot be imported');
    }
    throw error;
  }
}

/**
 * Claims the org's one running import, with its audit entry, for a file checkImportFile passed; throws
 * invalid_state when another import of the org runs. Empty cells keep stored values; a new number
 * without consent_capture is recorded as `imported`; a number given on an earlier line is rejected.
 */
export async function startImport(
  deps: ImportDeps,
  orgId: string,
  file: string,
  options: ImportOptions,
): Promise<StartedImport> {
  const claimed = await deps.db.transaction().execute(async (trx) => {
    const claim = await records.claimImport(trx, orgId, options.source, IMPORT_STALE_MS);
    if ('id' in claim && options.audit) await recordAudit(trx, options.audit(claim.id));
    return claim;
  });
  if (!('id' in claimed)) {
    deps.metrics?.contactImports.inc({ outcome: 'refused' });
    deps.logger.info({ org: orgId, running: claimed.running?.id }, 'contact import refused: another one is running');
    throw importRunning(claimed.running);
  }
  return { id: claimed.id, run: () => runImport(deps, orgId, file, claimed.id, options) };
}

/** Checks the file, claims the org and runs the import; resolves with its summary once every row is read. */
export async function importContacts(
  deps: ImportDeps,
  orgId: string,
  file: string,
  options: ImportOptions,
): Promise<ImportSummary> {
  await refuseIfRunning(deps, orgId);
  await checkImportFile(deps, orgId, file);
  return (await startImport(deps, orgId, file, options)).run();
}
