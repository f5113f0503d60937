// Maps stored agents to the API's Agent object.
import type { Selectable } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { AgentsTable } from '../../db/schema.js';

/** An agent in API form. */
export type Agent = components['schemas']['Agent'];

/** An agent as the API shows it. */
export function toAgent(row: Selectable<AgentsTable>): Agent {
  return {
    id: row.id,
    name: row.name,
    language: row.language,
    max_duration_sec: row.max_duration_sec,
    from_e164: row.from_e164,
    rate_paise_per_minute: row.rate_paise_per_minute,
    provider: row.provider,
    created_at: row.created_at.toISOString(),
  };
}
