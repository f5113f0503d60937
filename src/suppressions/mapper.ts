// Maps stored do-not-call entries to the API's Suppression object.
import type { Selectable } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { SuppressionsTable } from '../../db/schema.js';

/** A do-not-call entry in API form. */
export type Suppression = components['schemas']['Suppression'];

/** An entry as the API returns it. */
export function toSuppression(row: Selectable<SuppressionsTable>): Suppression {
  return {
    id: row.id,
    phone_e164: row.phone_e164,
    reason: row.reason,
    note: row.note,
    created_by: row.created_by,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
