// The Kysely view of the database: one interface per table, composed into Database.
import type { ColumnType, Generated } from 'kysely';
import type { components } from '../generated/openapi.js';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
type Json<T> = ColumnType<T, string, string>;

export interface PlansTable {
  id: string;
  name: string;
  rate_limit_per_minute: number;
  active: boolean;
  /** Calls each org on the plan may have in progress at once; null for no cap. */
  max_concurrent_calls: ColumnType<number | null, number | null | undefined, number | null>;
}

export interface OrgsTable {
  id: Generated<string>;
  name: string;
  plan_id: string | null;
  default_from_e164: string | null;
  balance_paise: Generated<number>;
  created_at: CreatedAt;
  /** Set on an org's test twin: the live org it belongs to (null on a live org). */
  live_org_id: Generated<string | null>;
  /** Migration 031: balance.low is sent when the balance falls below this many paise (0: never). */
  low_balance_threshold_paise: Generated<number>;
  /** Migration 031: the holds of the org's calls in flight, taken from balance_paise and not yet given back. */
  held_paise: Generated<number>;
}

export interface CreditLedgerTable {
  id: Generated<number>;
  org_id: string;
  amount_paise: number;
  kind: 'top_up' | 'hold' | 'release' | 'charge' | 'reset';
  call_id: string | null;
  note: string | null;
  created_at: CreatedAt;
}

export interface AgentsTable {
  id: Generated<string>;
  org_id: string;
  name: string;
  language: string;
  max_duration_sec: number;
  from_e164: string | null;
  rate_paise_per_minute: number;
  /** The voice provider the agent's calls go through, and the agent's settings for it. */
  provider: Generated<string>;
  provider_settings: ColumnType<Record<string, string>, string | undefined, string>;
  created_at: CreatedAt;
}

export interface ApiKeysTable {
  id: Generated<string>;
  org_id: string;
  prefix: string;
  secret_hash: string;
  created_at: CreatedAt;
  revoked_at: Date | null;
  /** Migration 013: an optional label, who created it (`cli` or a dashboard user's email), its last use (to the minute). */
  label: string | null;
  created_by: string | null;
  last_used_at: Date | null;
}

export interface RateLimitBucketsTable {
  org_id: string;
  second: number;
  hits: number;
  /** When the bucket's latest hit was, in epoch ms: the bucket counts until 60 s after it. */
  last_ms: number;
}

/** A client address's allowance of failed authentications, shared by every API process. */
export interface AuthFailureAllowancesTable {
  address: string;
  /** Failed authentications left; refills at the configured rate per minute, up to that rate. */
  tokens: number;
  /** When tokens was computed, in epoch ms. */
  at_ms: number;
}

export interface EventsTable {
  id: string;
  org_id: string;
  kind: string;
  data: Json<Record<string, unknown>>;
  created_at: CreatedAt;
  /** The W3C traceparent of the request that caused the event, when it carried one. */
  traceparent: string | null;
  /** Whether the event happened in live mode (stamped from its org as it is written). */
  livemode: Generated<boolean>;
}

/** Deliveries per endpoint and status, kept by triggers on webhook_deliveries. */
export interface WebhookDeliveryCountsTable {
  webhook_id: string;
  status: WebhookDeliveriesTable['status'];
  count: number;
}

/** A secret a rotation replaced, and when it stops signing. */
export interface PreviousSecret {
  secret: string;
  expires_at: string;
}

export interface WebhooksTable {
  id: Generated<string>;
  org_id: string;
  url: string;
  events: string[];
  active: Generated<boolean>;
  secret: string;
  /** Secrets replaced by rotations and still signing: [{secret, expires_at}], newest first. */
  previous_secrets: ColumnType<PreviousSecret[], string | undefined, string>;
  failing_since: Date | null;
  last_delivery_at: Date | null;
  last_delivery_status: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  /** Set when a deletion has begun; the row is gone once the sends in flight to it have ended. */
  deleted_at: Date | null;
  /** How many attempts have been logged for the endpoint: the log_position of the newest. */
  attempts_logged: Generated<number>;
  /**
   * Pending deliveries with a lower seq were dropped when the endpoint was switched off: never claimed,
   * shown as abandoned, and marked so by the clean-up in batches.
   */
  dropped_before_seq: ColumnType<string, never, string>;
}

export interface WebhookDeliveriesTable {
  id: Generated<string>;
  webhook_id: string;
  org_id: string;
  event_id: string;
  status: 'pending' | 'succeeded' | 'failed' | 'abandoned';
  attempt_count: Generated<number>;
  next_attempt_at: Date | null;
  lease_expires_at: Date | null;
  /** The process holding the lease (its instance id). */
  lease_owner: string | null;
  created_at: CreatedAt;
  /** Insertion order (migration 003): orders an endpoint's deliveries newest first. */
  seq: Generated<number>;
  /** Whether POST .../redeliver made it (migration 021): counted against REDELIVERIES_PER_ORG while pending. */
  redelivery: Generated<boolean>;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  webhook_id: string;
  attempt: number;
  status_code: number | null;
  failure_kind: string | null;
  response_excerpt: string | null;
  duration_ms: number;
  attempted_at: CreatedAt;
  /** Insertion order (migration 003): the order delivery logs are read in. */
  seq: Generated<number>;
  /** This attempt's number among its endpoint's attempts, from 1 (migration 022): pruning deletes by it. */
  log_position: number;
}

export interface ContactsTable {
  id: Generated<string>;
  org_id: string;
  phone_e164: string;
  name: string | null;
  email: string | null;
  language_pref: string | null;
  metadata: Json<Record<string, string | number | boolean>>;
  consent_capture: 'pre_call' | 'website_form' | 'manual' | 'imported';
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A number of an org that must not be dialed (migration 030); keyed by (org_id, phone_e164). */
export interface SuppressionsTable {
  org_id: string;
  phone_e164: string;
  id: Generated<string>;
  reason: components['schemas']['SuppressionReason'];
  note: string | null;
  /** Where the entry was added: through the API or from the dashboard. */
  created_by: 'api' | 'dashboard';
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A campaign: a batch of an org's contacts called by one agent inside windows (migration 033). */
export interface CampaignsTable {
  id: Generated<string>;
  org_id: string;
  agent_id: string;
  name: string;
  status: Generated<'scheduled' | 'running' | 'paused' | 'completed' | 'canceled'>;
  paused_reason: 'requested' | 'insufficient_credits' | null;
  starts_at: Timestamp;
  ends_at: Timestamp | null;
  /** An IANA time zone name, in which the windows are read. */
  timezone: string;
  windows: Json<CampaignWindow[]>;
  max_concurrency: number;
  max_attempts: number;
  /** The endings that are tried again: busy, no_answer, failed. */
  retry_on: Generated<string[]>;
  /** For `failed` in retry_on: the end reasons that are tried again. */
  retry_failed_reasons: Generated<string[]>;
  retry_interval_sec: number;
  /** How the contacts were chosen, as the request said (ids or a filter). */
  contact_selection: Json<Record<string, unknown>>;
  metadata: Json<Record<string, string | number | boolean>>;
  contacts_total: Generated<number>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
  finished_at: Timestamp | null;
  /** Contacts with one of these consent values are skipped (consent_excluded) from creation (migration 034). */
  exclude_consent_capture: Generated<ContactsTable['consent_capture'][]>;
  /** The Idempotency-Key of the request that created it, while it is remembered, and its body's hash. */
  idempotency_key: string | null;
  request_hash: string | null;
}

/** One calling window: on these days of the week, from start to end (local "HH:MM", end exclusive). */
export interface CampaignWindow {
  days: ('mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun')[];
  start: string;
  end: string;
}

/** One contact of a campaign, its attempts and where it stands (migration 033). */
export interface CampaignContactsTable {
  campaign_id: string;
  contact_id: string;
  org_id: string;
  /** Its place in the campaign's list, from 1: contacts are dialed in this order. */
  position: number;
  phone_e164: string;
  consent_capture: string;
  state: Generated<
    'pending' | 'calling' | 'completed' | 'failed' | 'no_answer' | 'busy' | 'skipped' | 'expired' | 'canceled'
  >;
  skip_reason: 'suppressed' | 'consent_excluded' | null;
  attempts: Generated<number>;
  /** The current attempt's placement (its call's id once recorded), else the latest call. */
  last_call_id: string | null;
  /** While an attempt is recorded: the call last_call_id named before it, put back if it never becomes a call. */
  previous_call_id: Generated<string | null>;
  /** The last attempt's ending (a call status) and its reason, when it has ended. */
  last_outcome: string | null;
  last_reason: string | null;
  next_attempt_at: Timestamp | null;
  /** While `calling` without a placement yet: when a worker's claim lapses (it died) and the contact is due again. */
  claimed_until: Timestamp | null;
  updated_at: UpdatedAt;
}

type CallSchemas = components['schemas'];
type Timestamp = ColumnType<Date, Date | string, Date | string>;

export interface CallsTable {
  id: string;
  org_id: string;
  agent_id: string;
  status: CallSchemas['CallStatus'];
  from_e164: string;
  to_e164: string;
  language: string;
  max_duration_sec: number;
  rate_paise_per_minute: number;
  hold_paise: number;
  metadata: Json<CallSchemas['Metadata']>;
  provider: string;
  provider_call_id: string;
  progress_cursor: Generated<number>;
  next_step_at: Timestamp | null;
  duration_sec: number | null;
  credits_debited_paise: Generated<number>;
  recording_url: string | null;
  llm_extracted_intent: string | null;
  llm_sentiment: CallSchemas['CallSentiment'] | null;
  llm_outcome: string | null;
  reason: CallSchemas['CallEndReason'] | null;
  transcript: Json<CallSchemas['TranscriptTurn'][]> | null;
  started_at: Timestamp | null;
  ended_at: Timestamp | null;
  created_at: Timestamp;
  campaign_id: ColumnType<string | null, string | null | undefined, never>;
  campaign_contact_id: ColumnType<string | null, string | null | undefined, never>;
  campaign_attempt: ColumnType<number | null, number | null | undefined, never>;
}

/** A placement between its two transactions: pending while the provider is asked, unknown when it never answered. */
export interface CallPlacementsTable {
  id: string;
  org_id: string;
  agent_id: string;
  state: 'pending' | 'unknown';
  provider: string;
  provider_settings: ColumnType<Record<string, string>, string, string>;
  from_e164: string;
  to_e164: string;
  language: string;
  max_duration_sec: number;
  rate_paise_per_minute: number;
  hold_paise: number;
  metadata: Json<CallSchemas['Metadata']>;
  idempotency_key: string | null;
  created_at: Timestamp;
  recover_at: Timestamp;
  campaign_id: string | null;
  campaign_contact_id: string | null;
  campaign_attempt: number | null;
}

/** A provider's report, stored once under its key; applied_at null while it waits for its call. */
export interface ProviderEventsTable {
  id: Generated<number>;
  provider: string;
  dedupe_key: string;
  call_id: string | null;
  provider_call_id: string | null;
  event: ColumnType<unknown, string, string>;
  received_at: Timestamp;
  applied_at: Timestamp | null;
}

export interface CallTimelineTable {
  id: Generated<number>;
  call_id: string;
  at: Timestamp;
  kind: CallSchemas['TimelineEntry']['kind'];
  detail: Json<CallSchemas['TimelineEntry']['detail']>;
}

export interface CallStatusCountsTable {
  org_id: string;
  status: CallSchemas['CallStatus'];
  count: number;
}

/** How many of a campaign's calls ended in one ending status (kept by a trigger; see migration 035). */
export interface CampaignCallCountsTable {
  campaign_id: string;
  /** An ending status only (completed, failed, no_answer, busy, canceled). */
  status: CallSchemas['CallStatus'];
  count: number;
}

export interface CallIdempotencyKeysTable {
  org_id: string;
  key: string;
  request_hash: string;
  call_id: string | null;
  response: Json<CallSchemas['CallCreated']> | null;
  created_at: Timestamp;
}

/** The database functions installed from db/functions/, with the hash of the file installed. */
export interface SchemaFunctionsTable {
  file: string;
  sha256: string;
  installed_at: Date;
}

/** A person who signs in to the dashboard: one org, a role, a password once the invite is accepted. */
export interface DashboardUsersTable {
  id: Generated<string>;
  org_id: string;
  email: string;
  role: 'admin' | 'viewer';
  password_hash: string | null;
  created_at: CreatedAt;
}

/** A one-time link (invite or reset) by the SHA-256 of its token. */
export interface DashboardLinksTable {
  token_hash: string;
  user_id: string;
  purpose: 'invite' | 'reset';
  expires_at: Date;
  used_at: Date | null;
  created_at: CreatedAt;
}

/** A signed-in session by the SHA-256 of its cookie value, with its CSRF token and its two expiries. */
export interface DashboardSessionsTable {
  id_hash: string;
  user_id: string;
  csrf_token: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
}

/** A one-time form's nonce, used once in its session. */
export interface DashboardFormUsesTable {
  session_id_hash: string;
  nonce: string;
  used_at: Date;
}

/** One CSV contact import: how far its committed batches got, and how it ended. */
export interface ContactImportsTable {
  id: Generated<string>;
  org_id: string;
  source: 'dashboard' | 'cli';
  status: 'running' | 'done' | 'failed';
  /** CSV rows read up to the last committed batch (their contacts and events are stored). */
  rows_committed: Generated<number>;
  /** The last line of the file those rows span. */
  last_line_committed: Generated<number>;
  created: Generated<number>;
  updated: Generated<number>;
  rejected: Generated<number>;
  rejections: ColumnType<Array<{ line: number; error: unknown }>, string | undefined, string>;
  reason: string | null;
  started_at: CreatedAt;
  heartbeat_at: UpdatedAt;
  finished_at: Date | null;
}

/** One failed sign-in, counted against an account (`account:<email>`) and an address (`address:<ip>`). */
export interface DashboardSignInFailuresTable {
  id: Generated<string>;
  subject: string;
  at: Date;
}

/** One change or sign-in: who, what, on what, from which address, when. */
export interface AuditLogTable {
  id: Generated<string>;
  org_id: string | null;
  actor: string;
  action: string;
  target: string | null;
  address: string | null;
  at: CreatedAt;
  /** Whether the change was made in live mode. */
  livemode: Generated<boolean>;
}

/** Every table the service uses. */
export interface Database {
  plans: PlansTable;
  orgs: OrgsTable;
  credit_ledger: CreditLedgerTable;
  agents: AgentsTable;
  api_keys: ApiKeysTable;
  rate_limit_buckets: RateLimitBucketsTable;
  auth_failure_allowances: AuthFailureAllowancesTable;
  events: EventsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  contacts: ContactsTable;
  contact_imports: ContactImportsTable;
  suppressions: SuppressionsTable;
  campaigns: CampaignsTable;
  campaign_contacts: CampaignContactsTable;
  calls: CallsTable;
  call_timeline: CallTimelineTable;
  call_status_counts: CallStatusCountsTable;
  campaign_call_counts: CampaignCallCountsTable;
  call_idempotency_keys: CallIdempotencyKeysTable;
  call_placements: CallPlacementsTable;
  provider_events: ProviderEventsTable;
  schema_functions: SchemaFunctionsTable;
  webhook_delivery_counts: WebhookDeliveryCountsTable;
  dashboard_users: DashboardUsersTable;
  dashboard_links: DashboardLinksTable;
  dashboard_sessions: DashboardSessionsTable;
  dashboard_form_uses: DashboardFormUsesTable;
  dashboard_sign_in_failures: DashboardSignInFailuresTable;
  audit_log: AuditLogTable;
}
