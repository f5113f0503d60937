// The campaigns feature's defaults and limits, named in one place (the request's bounds are in the spec).
import type { components } from '../../generated/openapi.js';

type Schemas = components['schemas'];

/** The most contacts a campaign may name by id: the spec's `CampaignContacts.contact_ids` maxItems. */
export const MAX_CONTACT_IDS = 1000;

/** Calls of one campaign in progress at once when the request does not say. */
export const DEFAULT_MAX_CONCURRENCY = 10;

/** The wait between an ended call and the contact's next attempt when the request does not say (seconds). */
export const DEFAULT_RETRY_INTERVAL_SEC = 3600;

/** The failed calls' reasons tried again when `retry.on` includes `failed` and `retry.failed_reasons` is omitted. */
export const DEFAULT_RETRIED_FAILURES: readonly Schemas['RetryableFailureReason'][] = ['provider_error', 'timeout'];
