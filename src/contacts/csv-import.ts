// CSV contact import: checks encoding and header first, then streams rows in batches through the
// same validation as the API, upserting and emitting contact.created once per new number.
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import type { Db } from '../database/connect.js';
import { emitEvents } from '../webhooks/outbox.js';
import * as contacts from './queries.js';
import { validators } from '../contract/validators.js';
import { IMPORT_BATCH_SIZE as BATCH_SIZE, MAX_LISTED_REJECTIONS } from './policy.js';

/** A file that cannot be imported at all (bad encoding, header, or CSV structure); nothing was written. */
export class ImportFileError extends Error {}

export const IMPORT_COLUMNS = ['phone_e164', 'name', 'email', 'language_pref', 'consent_capture', 'metadata'] as const;

export interface ImportSummary {
  rows: number;
  created: number;
  updated: number;
  rejected: number;
  rejections: Array<{ row: number; reasons: string[] }>;
}

/** Formats validator errors as `field: message` (field paths with dots). */
function describeErrors(errors: typeof validators.ContactUpsert.errors): string[] {
  return (errors ?? []).map((error) => {
    const field = error.instancePath.split('/').filter(Boolean).join('.');
    return `${field || 'row'}: ${error.message ?? 'is invalid'}`;
  });
}

type CsvRecords = AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>;

function readRecords(file: string): CsvRecords {
  return createReadStream(file).pipe(
    parse({ bom: true, columns: checkHeader, skip_empty_lines: true, info: true }),
  ) as unknown as CsvRecords;
}

/**
 * Reads the whole file once, in constant memory, without writing anything: throws ImportFileError
 * unless it is valid UTF-8 with a known header and well-formed CSV. Returns the number of records.
 */
async function checkFile(file: string): Promise<number> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  try {
    for await (const chunk of createReadStream(file)) decoder.decode(chunk as Buffer, { stream: true });
    decoder.decode();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ImportFileError(`file not found: ${file}`);
    if (error instanceof TypeError) throw new ImportFileError('the file is not valid UTF-8 text');
    throw error;
  }
  let records = 0;
  try {
    for await (const _record of readRecords(file)) records += 1;
  } catch (error) {
    if (error instanceof ImportFileError) throw error;
    if ((error as { code?: string }).code?.startsWith('CSV_')) {
      throw new ImportFileError(`malformed CSV: ${(error as Error).message}`);
    }
    throw error;
  }
  if (records === 0) throw new ImportFileError('the file has a header but no rows');
  return records;
}

function checkHeader(header: string[]): string[] {
  const names = header.map((name) => name.trim());
  const unknown = names.filter((name) => !(IMPORT_COLUMNS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new ImportFileError(`unknown column(s) ${unknown.join(', ')}; allowed: ${IMPORT_COLUMNS.join(', ')}`);
  }
  if (!names.includes('phone_e164')) throw new ImportFileError('the header must include a phone_e164 column');
  if (new Set(names).size !== names.length) throw new ImportFileError('the header repeats a column');
  return names;
}

/** Validates one record by the API's ContactUpsert rules; returns the row or the reasons it is refused. */
function toRow(record: Record<string, string>): { row: contacts.ImportRow } | { reasons: string[] } {
  const candidate: Record<string, unknown> = {};
  for (const [column, raw] of Object.entries(record)) {
    const value = raw.trim();
    if (value === '') continue;
    if (column === 'metadata') {
      try {
        candidate.metadata = JSON.parse(value);
      } catch {
        return { reasons: ['metadata: must be a JSON object'] };
      }
    } else {
      candidate[column] = value;
    }
  }
  if (!validators.ContactUpsert(candidate)) return { reasons: describeErrors(validators.ContactUpsert.errors) };
  return {
    row: {
      phone_e164: candidate.phone_e164,
      name: candidate.name ?? null,
      email: candidate.email ?? null,
      language_pref: candidate.language_pref ?? null,
      metadata: candidate.metadata ?? null,
      consent_capture: candidate.consent_capture ?? null,
    },
  };
}

/** Folds repeated numbers within a batch into one row; later non-empty cells win. */
function mergeByPhone(rows: contacts.ImportRow[]): contacts.ImportRow[] {
  const byPhone = new Map<string, contacts.ImportRow>();
  for (const row of rows) {
    const previous = byPhone.get(row.phone_e164);
    if (!previous) {
      byPhone.set(row.phone_e164, row);
      continue;
    }
    byPhone.set(row.phone_e164, {
      phone_e164: row.phone_e164,
      name: row.name ?? previous.name,
      email: row.email ?? previous.email,
      language_pref: row.language_pref ?? previous.language_pref,
      metadata: row.metadata ?? previous.metadata,
      consent_capture: row.consent_capture ?? previous.consent_capture,
    });
  }
  return [...byPhone.values()];
}

async function writeBatch(
  db: Db,
  orgId: string,
  batch: contacts.ImportRow[],
): Promise<{ created: number; updated: number }> {
  const rows = mergeByPhone(batch);
  return db.transaction().execute(async (trx) => {
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
    );
    const insertedPhones = new Set(inserted.map((row) => row.phone_e164));
    const updated = await contacts.updateExistingContacts(
      trx,
      orgId,
      rows.filter((row) => !insertedPhones.has(row.phone_e164)),
    );
    return { created: inserted.length, updated };
  });
}

/**
 * Imports a CSV file of contacts into an org. Empty cells keep stored values; a new number without
 * consent_capture is recorded as `imported`. Throws ImportFileError, having written nothing, for a
 * file with bad encoding, header or CSV structure; invalid rows are skipped and reported.
 */
export async function importContacts(
  db: Db,
  orgId: string,
  file: string,
  onProgress: (rowsRead: number) => void = () => undefined,
): Promise<ImportSummary> {
  await checkFile(file);
  const summary: ImportSummary = { rows: 0, created: 0, updated: 0, rejected: 0, rejections: [] };
  let batch: contacts.ImportRow[] = [];
  for await (const { record, info } of readRecords(file)) {
    summary.rows += 1;
    const result = toRow(record);
    if ('reasons' in result) {
      summary.rejected += 1;
      if (summary.rejections.length < MAX_LISTED_REJECTIONS)
        summary.rejections.push({ row: info.lines, reasons: result.reasons });
    } else {
      batch.push(result.row);
    }
    if (batch.length >= BATCH_SIZE) {
      const written = await writeBatch(db, orgId, batch);
      summary.created += written.created;
      summary.updated += written.updated;
      batch = [];
    }
    if (summary.rows % 10_000 === 0) onProgress(summary.rows);
  }
  if (batch.length > 0) {
    const written = await writeBatch(db, orgId, batch);
    summary.created += written.created;
    summary.updated += written.updated;
  }
  return summary;
}
