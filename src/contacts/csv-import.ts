// CSV contact import: checks the file (UTF-8, header, CSV structure) before writing anything, then
// streams its rows through the same rules as POST /contacts, all in one transaction: every bad row
// (and every repeat of a number given on an earlier line) is reported by line with the error the API
// would answer for the same values, and skipped; either the rest is imported or nothing is.
import { createReadStream } from 'node:fs';
import type { ErrorObject } from 'ajv';
import { parse } from 'csv-parse';
import type { Db } from '../database/connect.js';
import { recordAudit, type AuditEntry } from '../audit/service.js';
import { findUnstorableValue } from '../contract/text-rules.js';
import { inexactNumber, parseExactJson } from '../contract/exact-json.js';
import { messagesByField } from '../contract/validation-messages.js';
import { validators } from '../contract/validators.js';
import { invalidField, invalidFields, type DomainError } from '../errors.js';
import { emitEvents } from '../webhooks/outbox.js';
import { IMPORT_BATCH_SIZE as BATCH_SIZE, IMPORT_MAX_LINE_BYTES, MAX_LISTED_REJECTIONS } from './policy.js';
import * as contacts from './queries.js';

/** A file that cannot be imported at all (bad encoding, header, or CSV structure); nothing was written. */
export class ImportFileError extends Error {}

export const IMPORT_COLUMNS = ['phone_e164', 'name', 'email', 'language_pref', 'consent_capture', 'metadata'] as const;

/** What an import did: rows read = created + updated + rejected. */
export interface ImportSummary {
  rows: number;
  created: number;
  updated: number;
  rejected: number;
  /** The first rejected rows, by line number, each with the error object the API would answer. */
  rejections: Array<{ line: number; error: RowError }>;
}

/** Why a row was refused, as the API's error object: code, message, param and per-field details. */
export interface RowError {
  code: DomainError['code'];
  message: string;
  param: string | undefined;
  details: Record<string, string[]> | undefined;
}

type CsvRecords = AsyncIterable<{ record: Record<string, string>; info: { empty_lines: number } }>;

/** Physical lines listed in a bad-encoding report, at the most. */
const MAX_LISTED_LINES = 20;

/**
 * A counter of the line each record starts on, fed the records in order. csv-parse's own `lines`
 * gives where a record ends and counts a CRLF inside a quoted field as two lines, so the count is
 * kept here: the header's line, then each record's line breaks and the empty lines skipped before it.
 */
function recordStartLines(): (record: Record<string, string>, emptyLinesSoFar: number) => number {
  let lastLine = 1;
  let emptyLinesSeen = 0;
  return (record, emptyLinesSoFar) => {
    const start = lastLine + 1 + (emptyLinesSoFar - emptyLinesSeen);
    const breaks = Object.values(record).reduce((sum, value) => sum + (value.match(/\r\n|\r|\n/g)?.length ?? 0), 0);
    lastLine = start + breaks;
    emptyLinesSeen = emptyLinesSoFar;
    return start;
  };
}

/** The file's CSV records; `onHeader` is called with the checked column names once the header is read. */
function readRecords(file: string, onHeader: (names: string[]) => void = () => undefined): CsvRecords {
  return createReadStream(file).pipe(
    parse({
      bom: true,
      columns: (header: string[]) => {
        const names = checkHeader(header);
        onHeader(names);
        return names;
      },
      skip_empty_lines: true,
      info: true,
      max_record_size: IMPORT_MAX_LINE_BYTES,
    }),
  ) as unknown as CsvRecords;
}

function lineTooLong(line: number): ImportFileError {
  return new ImportFileError(
    `line ${line} is longer than ${IMPORT_MAX_LINE_BYTES / 1024 / 1024} MiB, the most a line of a contact file may hold; nothing was imported`,
  );
}

/**
 * The numbers of the file's lines that are not valid UTF-8, in constant memory (at most one line of
 * IMPORT_MAX_LINE_BYTES is held); throws ImportFileError naming the first line longer than that.
 */
async function linesNotUtf8(file: string): Promise<number[]> {
  const bad: number[] = [];
  let line = 1;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const check = (bytes: Buffer) => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      bad.push(line);
    }
  };
  const hold = (bytes: Buffer) => {
    pendingBytes += bytes.length;
    if (pendingBytes > IMPORT_MAX_LINE_BYTES) throw lineTooLong(line);
    pending.push(bytes);
  };
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    let start = 0;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, start)) {
      hold(chunk.subarray(start, at));
      check(Buffer.concat(pending));
      pending = [];
      pendingBytes = 0;
      start = at + 1;
      line += 1;
    }
    hold(chunk.subarray(start));
  }
  check(Buffer.concat(pending));
  return bad;
}

/**
 * Reads the whole file once, in constant memory, without writing anything: throws ImportFileError
 * unless it is valid UTF-8 with a known header and well-formed CSV.
 */
async function checkFile(file: string): Promise<void> {
  let bad: number[];
  try {
    bad = await linesNotUtf8(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ImportFileError(`file not found: ${file}`);
    throw error;
  }
  if (bad.length > 0) {
    const listed = bad.slice(0, MAX_LISTED_LINES).join(', ');
    const more = bad.length > MAX_LISTED_LINES ? ` and ${bad.length - MAX_LISTED_LINES} more` : '';
    throw new ImportFileError(`the file is not valid UTF-8 text: line ${listed}${more}; nothing was imported`);
  }
  let records = 0;
  let header = false;
  try {
    for await (const _record of readRecords(file, () => (header = true))) records += 1;
  } catch (error) {
    if (error instanceof ImportFileError) throw error;
    if ((error as { code?: string }).code === 'CSV_MAX_RECORD_SIZE') {
      throw new ImportFileError(
        `a CSV record ending on line ${(error as { lines?: number }).lines ?? '?'} is longer than ${IMPORT_MAX_LINE_BYTES / 1024 / 1024} MiB; nothing was imported`,
      );
    }
    if ((error as { code?: string }).code?.startsWith('CSV_')) {
      throw new ImportFileError(`malformed CSV: ${(error as Error).message}`);
    }
    throw error;
  }
  if (!header) throw new ImportFileError('the file has no rows: it is empty');
  if (records === 0) throw new ImportFileError('the file has a header but no rows');
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

/** The error object of a DomainError, as the API's envelope carries it. */
function rowError(error: DomainError): RowError {
  return { code: error.code, message: error.message, param: error.param, details: error.details };
}

/** The value at a JSON pointer into `value` (undefined when there is none). */
function valueAt(value: unknown, pointer: string): unknown {
  const keys = pointer
    .split('/')
    .slice(1)
    .map((key) => key.replace(/~1/g, '/').replace(/~0/g, '~'));
  return keys.reduce<unknown>(
    (node, key) =>
      node !== null && typeof node === 'object' ? Object.getOwnPropertyDescriptor(node, key)?.value : undefined,
    value,
  );
}

/**
 * The generated validator's errors less those the API's request validation does not raise: the generated
 * one is compiled in Ajv's strict mode, which refuses a number JSON cannot carry back (1e400, read as
 * Infinity) as not a number; the API's takes it for a number and its storable-value check refuses it.
 */
function asTheApiValidates(candidate: unknown, errors: ErrorObject[]): ErrorObject[] {
  return errors.filter((error) => {
    const value = valueAt(candidate, error.instancePath);
    return !(typeof value === 'number' && !Number.isFinite(value));
  });
}

/** The error POST /contacts answers for a body (schema errors, then an unstorable value), or null. */
function apiError(candidate: unknown, schemaErrors: ErrorObject[]): DomainError | null {
  if (schemaErrors.length > 0) return invalidFields(messagesByField(schemaErrors, { data: candidate }));
  const unstorable = findUnstorableValue(candidate);
  return unstorable ? invalidField(unstorable.path, unstorable.problem) : null;
}

/**
 * Checks one record as POST /contacts checks its body (the ContactUpsert schema, then values the
 * database cannot store); returns the row, or the error the API would answer.
 */
function toRow(record: Record<string, string>): { row: contacts.ImportRow } | { error: RowError } {
  const candidate: Record<string, unknown> = {};
  for (const [column, raw] of Object.entries(record)) {
    const value = raw.trim();
    if (value === '') continue;
    if (column !== 'metadata') {
      candidate[column] = value;
      continue;
    }
    let parsed: ReturnType<typeof parseExactJson>;
    try {
      parsed = parseExactJson(value);
    } catch {
      return { error: rowError(invalidField('metadata', 'must be a JSON object')) };
    }
    if (parsed.inexact) {
      const field = parsed.inexact.path ? `metadata.${parsed.inexact.path}` : 'metadata';
      return { error: rowError(invalidField(field, inexactNumber(parsed.inexact.source))) };
    }
    candidate.metadata = parsed.value;
  }
  const valid = validators.ContactUpsert(candidate);
  const errors = (validators.ContactUpsert.errors ?? []) as ErrorObject[];
  const error = apiError(candidate, valid ? [] : asTheApiValidates(candidate, errors));
  // A row the strict validator refuses is never imported, even if the API's checks would pass it.
  if (error || !valid) return { error: rowError(error ?? invalidFields(messagesByField(errors, { data: candidate }))) };
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

/** What an import reports as it reads, and the audit entry it writes when done. */
export interface ImportOptions {
  /** Called every 10,000 rows read. */
  onProgress?: (rowsRead: number) => void;
  /** The audit entry for the finished import, written in its transaction. */
  audit?: (summary: ImportSummary) => AuditEntry;
}

/**
 * Imports a CSV file of contacts into an org, in one transaction. Empty cells keep stored values; a new
 * number without consent_capture is recorded as `imported`; a number already given on an earlier line
 * is rejected (the first row of a number is the one imported). Throws ImportFileError, having written
 * nothing, for a file with bad encoding (naming its lines), header or CSV structure; database errors
 * roll the whole import back, its audit entry included.
 */
export async function importContacts(
  db: Db,
  orgId: string,
  file: string,
  options: ImportOptions = {},
): Promise<ImportSummary> {
  const { onProgress = () => undefined, audit } = options;
  await checkFile(file);
  const summary: ImportSummary = { rows: 0, created: 0, updated: 0, rejected: 0, rejections: [] };
  const reject = (line: number, error: RowError) => {
    summary.rejected += 1;
    if (summary.rejections.length < MAX_LISTED_REJECTIONS) summary.rejections.push({ line, error });
  };
  const firstLineOf = new Map<string, number>();
  await db.transaction().execute(async (trx) => {
    let batch: contacts.ImportRow[] = [];
    const flush = async () => {
      const written = await writeBatch(trx, orgId, batch);
      summary.created += written.created;
      summary.updated += written.updated;
      batch = [];
    };
    const startLineOf = recordStartLines();
    for await (const { record, info } of readRecords(file)) {
      summary.rows += 1;
      const line = startLineOf(record, info.empty_lines);
      const result = toRow(record);
      const firstLine = 'row' in result ? firstLineOf.get(result.row.phone_e164) : undefined;
      if ('error' in result) {
        reject(line, result.error);
      } else if (firstLine !== undefined) {
        const repeat = `${result.row.phone_e164} repeats line ${firstLine}; only the first row of a number is imported`;
        reject(line, rowError(invalidField('phone_e164', repeat)));
      } else {
        firstLineOf.set(result.row.phone_e164, line);
        batch.push(result.row);
        if (batch.length >= BATCH_SIZE) await flush();
      }
      if (summary.rows % 10_000 === 0) onProgress(summary.rows);
    }
    if (batch.length > 0) await flush();
    if (audit) await recordAudit(trx, audit(summary));
  });
  return summary;
}
