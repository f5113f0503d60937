// The contacts a campaign form's CSV names: a header line with a `contact_id` column, a `phone_e164`
// column or both, then one contact a row (as many as a campaign may name by id), matched against the
// contacts of the mode shown. Parsed with csv-parse, as contact imports are; every row that names no
// contact is reported by its line.
import type { ErrorObject } from 'ajv';
import { parse } from 'csv-parse/sync';
import type { Db } from '../../database/connect.js';
import { findContactsByIdOrPhone } from '../../contacts/service.js';
import { messagesByField } from '../../contract/validation-messages.js';
import { validators } from '../../contract/validators.js';
import { DomainError, invalidField } from '../../errors.js';
import { MAX_CSV_BYTES } from '../policy.js';
import { MAX_CONTACT_IDS } from '../../campaigns/policy.js';

/** The columns the CSV may have. */
export const CAMPAIGN_CSV_COLUMNS = ['contact_id', 'phone_e164'] as const;

/** A row of the CSV that names no usable contact: its line and why. */
export interface CsvLineProblem {
  line: number;
  message: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Named {
  line: number;
  id: string;
  phone: string;
}

function checkHeader(header: string[]): string[] {
  const names = header.map((name) => name.trim());
  const unknown = names.filter((name) => !(CAMPAIGN_CSV_COLUMNS as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw invalidField(
      'csv',
      `has unknown column(s) ${unknown.join(', ')}; allowed: ${CAMPAIGN_CSV_COLUMNS.join(', ')}`,
    );
  }
  if (names.length === 0) throw invalidField('csv', 'needs a header line naming contact_id or phone_e164');
  if (new Set(names).size !== names.length) throw invalidField('csv', 'repeats a column in its header');
  return names;
}

/** The rows of the CSV with the line each ends on; throws invalid_request (param csv) for text that is no such CSV. */
function readRows(text: string): Named[] {
  if (Buffer.byteLength(text) > MAX_CSV_BYTES) {
    throw invalidField('csv', `must be at most ${MAX_CSV_BYTES / 1024 / 1024} MB`);
  }
  let records: Array<{ record: Record<string, string>; info: { lines: number } }>;
  try {
    records = parse(text, { bom: true, columns: checkHeader, skip_empty_lines: true, info: true });
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw invalidField('csv', `is not well-formed CSV: ${(error as Error).message}`);
  }
  if (records.length === 0) throw invalidField('csv', 'has no rows after its header');
  if (records.length > MAX_CONTACT_IDS) {
    throw invalidField(
      'csv',
      `names ${records.length.toLocaleString('en')} contacts; a campaign takes at most ${MAX_CONTACT_IDS.toLocaleString('en')} by name (choose more by consent)`,
    );
  }
  return records.map(({ record, info }) => ({
    line: info.lines,
    id: (record.contact_id ?? '').trim(),
    phone: (record.phone_e164 ?? '').trim(),
  }));
}

/** Why a row's own values cannot name a contact, or null. */
function rowProblem(row: Named): string | null {
  if (row.id === '' && row.phone === '') return 'gives neither a contact_id nor a phone_e164';
  if (row.id !== '' && !UUID.test(row.id)) return 'contact_id must be a contact id (a UUID)';
  if (row.phone !== '' && !validators.ContactUpsert({ phone_e164: row.phone })) {
    const errors = (validators.ContactUpsert.errors ?? []) as ErrorObject[];
    const words = messagesByField(errors, { data: { phone_e164: row.phone } }).get('phone_e164') ?? ['is invalid'];
    return `phone_e164 ${words.join('; ')}`;
  }
  return null;
}

/**
 * The contact ids the CSV names, in its order, from the org's contacts; or, when any row names no
 * contact of the org (or one already named), every such row by line, and no ids. A row giving both
 * columns must name one contact by both. Throws invalid_request (param csv) for text that is no such CSV.
 */
export async function contactsOfCsv(
  db: Db,
  orgId: string,
  text: string,
): Promise<{ contactIds: string[]; problems: CsvLineProblem[] }> {
  const rows = readRows(text);
  const problems: CsvLineProblem[] = [];
  const usable = rows.filter((row) => {
    const problem = rowProblem(row);
    if (problem) problems.push({ line: row.line, message: problem });
    return !problem;
  });
  const found = await findContactsByIdOrPhone(db, orgId, {
    ids: [...new Set(usable.flatMap((row) => (row.id ? [row.id.toLowerCase()] : [])))],
    phones: [...new Set(usable.flatMap((row) => (row.phone && !row.id ? [row.phone] : [])))],
  });
  const byId = new Map(found.map((contact) => [contact.id, contact]));
  const byPhone = new Map(found.map((contact) => [contact.phone_e164, contact]));
  const lineOf = new Map<string, number>();
  const contactIds: string[] = [];
  for (const row of usable) {
    const contact = row.id ? byId.get(row.id.toLowerCase()) : byPhone.get(row.phone);
    let problem: string | null = null;
    if (!contact) {
      problem = row.id ? 'no contact has this contact_id' : `no contact has the number ${row.phone}`;
    } else if (row.id && row.phone && contact.phone_e164 !== row.phone) {
      problem = `contact_id names the contact with the number ${contact.phone_e164}, not ${row.phone}`;
    } else if (lineOf.has(contact.id)) {
      problem = `names the same contact as line ${lineOf.get(contact.id)}; each contact is called once`;
    }
    if (problem) {
      problems.push({ line: row.line, message: problem });
      continue;
    }
    lineOf.set(contact!.id, row.line);
    contactIds.push(contact!.id);
  }
  problems.sort((a, b) => a.line - b.line);
  return problems.length ? { contactIds: [], problems } : { contactIds, problems };
}
