// Do-not-call rules: an entry per (org, number) added or updated by an upsert, removed by number, read at
// dial time by a placement (which refuses a listed number), listed newest first. The org is the key's
// (or the dashboard's mode's), so live and test keep separate lists.
import type { ErrorObject } from 'ajv';
import type { components } from '../../generated/openapi.js';
import type { Db } from '../database/connect.js';
import { recordAudit, type AuditEntry } from '../audit/service.js';
import { unknownCursor, type PageStart } from '../contract/pagination.js';
import { messagesByField } from '../contract/validation-messages.js';
import { validators } from '../contract/validators.js';
import { DomainError, invalidFields } from '../errors.js';
import * as suppressions from './queries.js';
import { toSuppression, type Suppression } from './mapper.js';

type SuppressionCreate = components['schemas']['SuppressionCreate'];

/** Where an entry was added from, as its `created_by` says. */
export type SuppressionSource = 'api' | 'dashboard';

/**
 * The input of a new entry from outside the API pipeline (the dashboard's form), checked against the
 * spec's SuppressionCreate schema as the API checks its request body. Throws invalid_request naming the field.
 */
export function checkSuppressionCreate(input: unknown): SuppressionCreate {
  if (validators.SuppressionCreate(input)) return input;
  throw invalidFields(messagesByField((validators.SuppressionCreate.errors ?? []) as ErrorObject[], { data: input }));
}

/**
 * Puts the number on the org's list, or replaces the reason and note of its entry, with the audit entry
 * `audit` makes (when given; told whether the entry is new) in the same transaction; returns the entry
 * and whether it is new.
 */
export async function addSuppression(
  db: Db,
  orgId: string,
  input: SuppressionCreate,
  source: SuppressionSource,
  audit?: (created: boolean) => AuditEntry,
): Promise<{ suppression: Suppression; created: boolean }> {
  return db.transaction().execute(async (trx) => {
    const { inserted, ...row } = await suppressions.upsertSuppressionRow(trx, orgId, {
      phone: input.phone_e164,
      reason: input.reason,
      note: input.note ?? null,
      createdBy: source,
    });
    if (audit) await recordAudit(trx, audit(inserted));
    return { suppression: toSuppression(row), created: inserted };
  });
}

/** The not_found of a number that is not on the org's list. */
function notListed(): DomainError {
  return new DomainError('not_found', "This number is not on your organisation's do-not-call list.", {
    param: 'phone_e164',
  });
}

/** The org's entry for the number; throws not_found (param phone_e164) when it is not on the list. */
export async function findSuppression(db: Db, orgId: string, phone: string): Promise<Suppression> {
  const row = await suppressions.findSuppressionRow(db, orgId, phone);
  if (!row) throw notListed();
  return toSuppression(row);
}

/**
 * Takes the number off the org's list, with `audit` (when given) in the same transaction. Throws
 * not_found (param phone_e164) when it is not on the list.
 */
export async function removeSuppression(db: Db, orgId: string, phone: string, audit?: AuditEntry): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await suppressions.deleteSuppressionRow(trx, orgId, phone))) throw notListed();
    if (audit) await recordAudit(trx, audit);
  });
}

/**
 * The refusal of a placement to a number on the org's list (forbidden, param to_e164), given the entry's
 * reason: a placement reads the list in its first transaction, so a refused call holds and writes nothing.
 */
export function listedNumberError(phone: string, reason: Suppression['reason']): DomainError {
  return new DomainError(
    'forbidden',
    `${phone} is on your organisation's do-not-call list (reason ${reason}); remove it with DELETE /suppressions/{phone_e164} before calling it.`,
    { param: 'to_e164' },
  );
}

/** Which of `phones` are on the org's list now (a campaign's batch reads it at dial time, as a single placement does). */
export async function findSuppressed(db: Db, orgId: string, phones: string[]): Promise<Set<string>> {
  return suppressions.suppressedAmong(db, orgId, phones);
}

/**
 * One page of the org's list in API form, of the entries with `reason` or of `phone` when given; a cursor
 * must be an entry of the org (else invalid_request).
 */
export async function listSuppressions(
  db: Db,
  orgId: string,
  page: { limit: number; reason?: Suppression['reason']; phone?: string } & PageStart,
): Promise<{ items: Suppression[]; total: number; more: boolean }> {
  if ('cursor' in page && !(await suppressions.hasSuppressionId(db, orgId, page.cursor))) {
    throw unknownCursor(page.side);
  }
  const { rows, total, more } = await suppressions.listSuppressionRows(db, orgId, page);
  return { total, more, items: rows.map(toSuppression) };
}

/** A page of the org's list from `offset` in API form, and whether more follow; counts nothing. */
export async function browseSuppressions(
  db: Db,
  orgId: string,
  page: { limit: number; offset: number },
): Promise<{ items: Suppression[]; more: boolean }> {
  const rows = await suppressions.browseSuppressionRows(db, orgId, page);
  return { items: rows.slice(0, page.limit).map(toSuppression), more: rows.length > page.limit };
}
