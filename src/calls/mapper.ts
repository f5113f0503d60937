// Maps stored calls to the API's Call, CallCreated and CallDetail objects.
import type { components } from '../../generated/openapi.js';
import type { CallListRow, CallRow } from './queries.js';
import { toTimelineEntry, type listTimeline } from './timeline-queries.js';

type Schemas = components['schemas'];
type TimelineRow = Awaited<ReturnType<typeof listTimeline>>[number];

function iso(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

/** The fields returned right after placement. */
export function toCallCreated(row: CallRow): Schemas['CallCreated'] {
  return {
    id: row.id,
    status: row.status,
    agent_id: row.agent_id,
    to_e164: row.to_e164,
    provider: row.provider,
    provider_call_id: row.provider_call_id,
    created_at: row.created_at.toISOString(),
  };
}

/** A call as lists return it. */
export function toCall(row: CallListRow): Schemas['Call'] {
  return {
    id: row.id,
    status: row.status,
    direction: 'outbound',
    agent_id: row.agent_id,
    from_e164: row.from_e164,
    to_e164: row.to_e164,
    language: row.language,
    provider: row.provider,
    provider_call_id: row.provider_call_id,
    duration_sec: row.duration_sec,
    credits_debited_paise: row.credits_debited_paise,
    recording_url: row.recording_url,
    llm_extracted_intent: row.llm_extracted_intent,
    llm_sentiment: row.llm_sentiment,
    llm_outcome: row.llm_outcome,
    reason: row.reason,
    metadata: row.metadata,
    campaign_id: row.campaign_id,
    started_at: iso(row.started_at),
    ended_at: iso(row.ended_at),
    created_at: row.created_at.toISOString(),
  };
}

/** A call with its timeline and, once completed, its transcript. */
export function toCallDetail(row: CallRow, timeline: TimelineRow[]): Schemas['CallDetail'] {
  const { transcript, ...listed } = row;
  return {
    ...toCall(listed),
    ...(row.status === 'completed' ? { transcript: transcript ?? [] } : {}),
    timeline: timeline.map(toTimelineEntry),
  };
}
