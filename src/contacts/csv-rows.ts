// The rows of a CSV contact file: checks the file (UTF-8, header, CSV structure) before anything is
// written, then reads its rows through the same rules as POST /contacts: every bad row (and every repeat
// of a number given on an earlier line) comes with its line and the error the API would answer.
import { createReadStream } from 'node:fs';
import type { ErrorObject } from 'ajv';
import { parse } from 'csv-parse';
import { findUnstorableValue } from '../contract/text-rules.js';
import { inexactNumber, parseExactJson } from '../contract/exact-json.js';
import { messagesByField } from '../contract/validation-messages.js';
import { validators } from '../contract/validators.js';
import { invalidField, invalidFields, type DomainError } from '../errors.js';
import { IMPORT_MAX_LINE_BYTES } from './policy.js';
import * as contacts from './queries.js';

/** A file that cannot be imported at all (bad encoding, header, or CSV structure); nothing was written. */
export class ImportFileError extends Error {}

/** The columns a contact file may have, in the order the dashboard lists them. */
export const IMPORT_COLUMNS = ['phone_e164', 'name', 'email', 'language_pref', 'consent_capture', 'metadata'] as const;

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
  );
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

/** Why a file could not be read, in words, by the system's error code. */
const UNREADABLE: Record<string, string> = {
  ENOENT: 'file not found',
  EISDIR: 'a directory, not a file',
  EACCES: 'no permission to read the file',
};

/**
 * Reads the whole file once, in constant memory, without writing anything: throws ImportFileError
 * unless it is valid UTF-8 with a known header and well-formed CSV.
 */
export async function checkFile(file: string): Promise<void> {
  let bad: number[];
  try {
    bad = await linesNotUtf8(file);
  } catch (error) {
    const why = UNREADABLE[(error as NodeJS.ErrnoException).code ?? ''];
    if (why) throw new ImportFileError(`${why}: ${file}`);
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
    const rows = readRecords(file, () => (header = true))[Symbol.asyncIterator]();
    while (!(await rows.next()).done) records += 1;
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

/** One row of the file: where it starts, and the contact it gives or why it was refused. */
export interface ReadRow {
  line: number;
  result: { row: contacts.ImportRow } | { error: RowError };
}

/**
 * The file's rows in order, each checked (run checkFile first). A number already given on an earlier
 * line is refused: the first row of a number is the one imported.
 */
export async function* readRows(file: string): AsyncGenerator<ReadRow> {
  const firstLineOf = new Map<string, number>();
  const startLineOf = recordStartLines();
  for await (const { record, info } of readRecords(file)) {
    const line = startLineOf(record, info.empty_lines);
    const result = toRow(record);
    if ('error' in result) {
      yield { line, result };
      continue;
    }
    const firstLine = firstLineOf.get(result.row.phone_e164);
    if (firstLine !== undefined) {
      const repeat = `${result.row.phone_e164} repeats line ${firstLine}; only the first row of a number is imported`;
      yield { line, result: { error: rowError(invalidField('phone_e164', repeat)) } };
      continue;
    }
    firstLineOf.set(result.row.phone_e164, line);
    yield { line, result };
  }
}
