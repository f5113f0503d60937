// Maps stored campaigns and their contacts to the API's Campaign and CampaignContact objects.
import type { components } from '../../generated/openapi.js';
import type { CampaignContactRow, CampaignCounters, CampaignRow } from './queries.js';

type Schemas = components['schemas'];

/** A campaign in API form. */
export type Campaign = Schemas['Campaign'];
/** A contact of a campaign in API form. */
export type CampaignContact = Schemas['CampaignContact'];

/** A campaign as the API returns it, with its counters (campaignCounters in ./queries.ts). */
export function toCampaign(row: CampaignRow, counters: CampaignCounters): Campaign {
  return {
    id: row.id,
    name: row.name,
    agent_id: row.agent_id,
    status: row.status,
    paused_reason: row.paused_reason,
    contacts: row.contact_selection,
    exclude_consent_capture: row.exclude_consent_capture,
    schedule: {
      starts_at: row.starts_at.toISOString(),
      ends_at: row.ends_at === null ? null : row.ends_at.toISOString(),
      timezone: row.timezone,
      windows: row.windows,
    },
    max_concurrency: row.max_concurrency,
    retry: {
      max_attempts: row.max_attempts,
      on: row.retry_on as Schemas['RetryableEnding'][],
      failed_reasons: row.retry_failed_reasons as Schemas['RetryableFailureReason'][],
      interval_sec: row.retry_interval_sec,
    },
    metadata: row.metadata,
    counters,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    finished_at: row.finished_at === null ? null : row.finished_at.toISOString(),
  };
}

/**
 * A contact of a campaign as the API returns it: a contact being called is `in_progress`; one a dispatch
 * pass has claimed but not placed a call for yet (its org at its call cap, say) is still `pending`.
 */
export function toCampaignContact(row: CampaignContactRow): CampaignContact {
  return {
    contact_id: row.contact_id,
    phone_e164: row.phone_e164,
    position: row.position,
    state: row.state !== 'calling' ? row.state : row.claimed_until === null ? 'in_progress' : 'pending',
    skip_reason: row.skip_reason,
    attempts: row.attempts,
    last_call_id: row.last_call_id,
    last_outcome: row.last_outcome as Schemas['CallStatus'] | null,
    last_reason: row.last_reason as Schemas['CallEndReason'] | null,
    next_attempt_at: row.next_attempt_at === null ? null : row.next_attempt_at.toISOString(),
  };
}
