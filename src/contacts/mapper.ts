// Maps stored contacts to the API's Contact object.
import type { Selectable } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { ContactsTable } from '../../db/schema.js';

type Schemas = components['schemas'];
/** A contact in API form. */
export type Contact = Schemas['Contact'];

/** A contact as lists return it. */
export function toContact(row: Selectable<ContactsTable>): Contact {
  return {
    id: row.id,
    phone_e164: row.phone_e164,
    name: row.name,
    email: row.email,
    language_pref: row.language_pref,
    metadata: row.metadata,
    consent_capture: row.consent_capture,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
