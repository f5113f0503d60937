// Contact rules: upsert keyed by phone number, consent required for new numbers, contact.created once.
import type { components } from '../../generated/openapi.js';
import type { Db } from '../database/connect.js';
import { emitEvent } from '../webhooks/outbox.js';
import { deleteInBatches } from '../database/batches.js';
import { invalidField, notFound } from '../errors.js';
import { unknownCursor, type PageStart } from '../contract/pagination.js';
import * as contacts from './queries.js';
import * as imports from './import-records.js';
import type { ImportRecord } from './import-records.js';
import { toContact, type Contact } from './mapper.js';

type ContactUpsert = components['schemas']['ContactUpsert'];

/** A contact as stored by an upsert, and whether the upsert created it. */
export interface UpsertedContact {
  contact: Contact;
  created: boolean;
}

/**
 * Creates or updates the org's contact for `phone_e164` in one transaction, emitting contact.created
 * (with the request's `traceparent`) when the number is new, and returns it as stored with whether
 * it was created. Throws invalid_request (param consent_capture) for a new number without consent.
 */
export async function upsertContact(
  db: Db,
  orgId: string,
  input: ContactUpsert,
  traceparent: string | null,
): Promise<UpsertedContact> {
  const { phone_e164: phone, ...fields } = input;
  return db.transaction().execute(async (trx) => {
    if (fields.consent_capture === undefined) {
      const updated = await contacts.updateContactRow(trx, orgId, phone, fields);
      if (!updated) throw invalidField('consent_capture', 'is required when the phone number is new');
      return { contact: toContact(updated), created: false };
    }
    const row = await contacts.upsertContactRow(trx, orgId, phone, fields);
    if (row.inserted) {
      await emitEvent(
        trx,
        orgId,
        'contact.created',
        {
          contact_id: row.id,
          phone_e164: row.phone_e164,
          name: row.name,
          consent_capture: row.consent_capture,
        },
        traceparent,
      );
    }
    return { contact: toContact(row), created: row.inserted };
  });
}

/** The org's contact in API form; throws not_found (param id) for an unknown or foreign id. */
export async function getContact(db: Db, orgId: string, id: string): Promise<Contact> {
  const row = await contacts.findContactRow(db, orgId, id);
  if (!row) throw notFound('contact');
  return toContact(row);
}

/** A page of the org's contacts in API form from `offset`, and whether more follow; counts nothing. */
export async function browseContacts(
  db: Db,
  orgId: string,
  page: { limit: number; offset: number; consent?: contacts.ConsentCapture },
): Promise<{ items: Contact[]; more: boolean }> {
  const rows = await contacts.browseContactRows(db, orgId, page);
  return { items: rows.slice(0, page.limit).map(toContact), more: rows.length > page.limit };
}

/**
 * The org's contacts named by id (among `ids`, which must be UUIDs) or by number (among `phones`), as
 * their id and number; names that match no contact are simply absent.
 */
export async function findContactsByIdOrPhone(
  db: Db,
  orgId: string,
  names: { ids: readonly string[]; phones: readonly string[] },
): Promise<Array<{ id: string; phone_e164: string }>> {
  if (names.ids.length === 0 && names.phones.length === 0) return [];
  return contacts.findContactKeys(db, orgId, names.ids, names.phones);
}

/** One page of the org's contacts in API form; a cursor must be a contact of the org (else invalid_request). */
export async function listContacts(
  db: Db,
  orgId: string,
  page: { limit: number; consent?: contacts.ConsentCapture } & PageStart,
): Promise<{ items: Contact[]; total: number; more: boolean }> {
  if ('cursor' in page && !(await contacts.findContactRow(db, orgId, page.cursor))) throw unknownCursor(page.side);
  const { rows, total, more } = await contacts.listContactRows(db, orgId, page);
  return { total, more, items: rows.map(toContact) };
}

/** The org's CSV import with this id, with its progress or end; throws not_found for an unknown or foreign id. */
export async function getContactImport(db: Db, orgId: string, id: string): Promise<ImportRecord> {
  const found = await imports.findImport(db, orgId, id);
  if (!found) throw notFound('contact import');
  return found;
}

/** Removes the records of imports that ended before `before`, in batches of `batchSize`; returns how many went. */
export async function pruneContactImports(db: Db, before: Date, batchSize: number): Promise<number> {
  return deleteInBatches(() => imports.deleteEndedImports(db, before, batchSize), batchSize);
}
