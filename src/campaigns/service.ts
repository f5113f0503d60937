// Campaign rules: creation (the checks the schema cannot express, the agent, the plan, the contacts
// chosen in one transaction with the Idempotency-Key), reads with counters, and the state changes a
// client may ask for (pause, resume, cancel). The dispatcher (./dispatch/) moves campaigns and their
// contacts on from there. The org is the key's (or the dashboard's mode's), so live and test keep
// separate campaigns.
import type { ErrorObject } from 'ajv';
import type { components } from '../../generated/openapi.js';
import type { Db } from '../database/connect.js';
import { recordAudit, type AuditEntry } from '../audit/service.js';
import { unknownCursor, type PageStart } from '../contract/pagination.js';
import { validators } from '../contract/validators.js';
import { DomainError, invalidField, notFound } from '../errors.js';
import { findAgentInOrg, hasActivePlan } from '../orgs/service.js';
import type { AuthContext } from '../orgs/authenticator.js';
import { requestFingerprint } from '../calls/idempotency.js';
import { instantOf } from '../contract/instant.js';
import { IDEMPOTENCY_WINDOW_MS } from '../calls/policy.js';
import * as campaigns from './queries.js';
import { toCampaign, toCampaignContact, type Campaign, type CampaignContact } from './mapper.js';
import { DEFAULT_MAX_CONCURRENCY, DEFAULT_RETRIED_FAILURES, DEFAULT_RETRY_INTERVAL_SEC } from './policy.js';

type Schemas = components['schemas'];
type CampaignCreate = Schemas['CampaignCreate'];
type CampaignStatus = Schemas['CampaignStatus'];

/**
 * What is wrong with a campaign creation made outside the API pipeline (the dashboard's form) against
 * the spec's CampaignCreate schema, as the API would check its body: Ajv's errors, none when it is valid.
 */
export function campaignCreateProblems(input: unknown): ErrorObject[] {
  return validators.CampaignCreate(input) ? [] : ((validators.CampaignCreate.errors ?? []) as ErrorObject[]);
}

/** A campaign creation as the API received it. */
export interface CreateCampaignRequest {
  auth: Pick<AuthContext, 'orgId' | 'accountOrgId'>;
  body: CampaignCreate;
  idempotencyKey: string | undefined;
  /** The moment of the request: a start in the past is this moment. */
  now: Date;
}

/** Whether `name` is a time zone this runtime knows (the schema's pattern has already refused bare offsets). */
function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * The rules of a creation that need no database and no clock: one way of choosing contacts, each id once
 * (the schema's uniqueItems compares text, so the same id in other letter case passes it), a known time
 * zone, windows that open before they close, failed_reasons only with `failed` retried. Throws
 * invalid_request naming the field.
 */
function checkCampaignRules(body: CampaignCreate): void {
  if ((body.contacts.contact_ids === undefined) === (body.contacts.filter === undefined)) {
    throw invalidField('contacts', 'must hold exactly one of contact_ids and filter');
  }
  const firstIndex = new Map<string, number>();
  body.contacts.contact_ids?.forEach((id, index) => {
    const earlier = firstIndex.get(id.toLowerCase());
    if (earlier !== undefined) {
      throw invalidField(
        `contacts.contact_ids.${index}`,
        `names the same contact as contacts.contact_ids.${earlier}; each contact is called once`,
      );
    }
    firstIndex.set(id.toLowerCase(), index);
  });
  if (!isTimeZone(body.schedule.timezone))
    throw invalidField('schedule.timezone', 'must be an IANA time zone name, such as Asia/Kolkata');
  body.schedule.windows.forEach((window, index) => {
    if (window.start >= window.end) {
      throw invalidField(`schedule.windows.${index}.end`, `must be later than the window's start (${window.start})`);
    }
  });
  const retry: Schemas['CampaignRetryCreate'] = body.retry ?? {};
  if (retry.failed_reasons !== undefined && !(retry.on ?? []).includes('failed')) {
    throw invalidField('retry.failed_reasons', 'applies only when retry.on includes failed');
  }
  if ((retry.on ?? []).length > 0 && (retry.max_attempts ?? 1) < 2) {
    throw invalidField(
      'retry.max_attempts',
      'must be 2 to 5 for the endings in retry.on to be called again (1, the default, is a single call per contact)',
    );
  }
}

/**
 * The span of the campaign: its start (the request's moment when omitted or past) and its end (null:
 * none), as instants, the end checked against the start.
 */
function checkedSpan(body: CampaignCreate, now: Date): { startsAt: Date; endsAt: Date | null } {
  const asked = body.schedule.starts_at === undefined ? now : instantOf('schedule.starts_at', body.schedule.starts_at);
  const startsAt = asked < now ? now : asked;
  const ends = body.schedule.ends_at;
  const endsAt = ends === undefined || ends === null ? null : instantOf('schedule.ends_at', ends);
  if (endsAt !== null && endsAt <= startsAt) {
    throw invalidField(
      'schedule.ends_at',
      body.schedule.starts_at === undefined || asked < now
        ? 'must be in the future'
        : 'must be later than schedule.starts_at',
    );
  }
  return { startsAt, endsAt };
}

/** The answer to a request whose Idempotency-Key a campaign already holds: that campaign, or a conflict. */
async function replay(db: Db, existing: campaigns.CampaignRow, requestHash: string): Promise<Campaign> {
  if (existing.request_hash !== requestHash) {
    throw new DomainError(
      'idempotency_conflict',
      'This Idempotency-Key was already used with a different request body.',
      {
        param: 'Idempotency-Key',
      },
    );
  }
  return withCounters(db, existing);
}

/** The campaign in API form with its counters read now. */
async function withCounters(db: Db, row: campaigns.CampaignRow): Promise<Campaign> {
  const counters = (await campaigns.campaignCounters(db, [row.id])).get(row.id);
  if (!counters) throw new Error(`campaign ${row.id} has no contacts`);
  return toCampaign(row, counters);
}

/**
 * Creates a campaign and its contacts in one transaction, or with an Idempotency-Key already held by one
 * of the org's campaigns, returns that campaign (`replayed`). Checks in order: the rules beyond the
 * schema (invalid_request), the key (idempotency_conflict for another body), the end against the
 * moment of the request (invalid_request; after the key, so a replay outlives its end), the agent
 * (not_found, param agent_id), the plan (forbidden), the contact ids (not_found, param
 * contacts.contact_ids.<index>) and that one contact at least is chosen (invalid_request, param
 * contacts). A refused request writes nothing. The audit entry `audit`
 * makes for the new campaign (when given) is written in the same transaction; a replay writes none.
 */
export async function createCampaign(
  db: Db,
  request: CreateCampaignRequest,
  audit?: (campaignId: string) => AuditEntry,
): Promise<{ campaign: Campaign; replayed: boolean }> {
  const { auth, body, idempotencyKey: key, now } = request;
  checkCampaignRules(body);
  const requestHash = requestFingerprint(body);
  return db.transaction().execute(async (trx) => {
    if (key !== undefined) {
      await campaigns.releaseExpiredKey(trx, auth.orgId, key, new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS));
      const existing = await campaigns.findCampaignByKey(trx, auth.orgId, key);
      if (existing) return { campaign: await replay(trx, existing, requestHash), replayed: true };
    }
    const { startsAt, endsAt } = checkedSpan(body, now);
    if (!(await findAgentInOrg(trx, auth.accountOrgId, body.agent_id))) throw notFound('agent', 'agent_id');
    if (!(await hasActivePlan(trx, auth.orgId)))
      throw new DomainError('forbidden', 'The organisation has no active plan.');
    const retry: Schemas['CampaignRetryCreate'] = body.retry ?? {};
    const retryOn = retry.on ?? [];
    const excluded = body.exclude_consent_capture ?? [];
    const inserted = await campaigns.insertCampaignRow(trx, {
      org_id: auth.orgId,
      agent_id: body.agent_id,
      name: body.name,
      starts_at: startsAt,
      ends_at: endsAt,
      timezone: body.schedule.timezone,
      windows: JSON.stringify(body.schedule.windows),
      max_concurrency: body.max_concurrency ?? DEFAULT_MAX_CONCURRENCY,
      max_attempts: retry.max_attempts ?? 1,
      retry_on: retryOn,
      retry_failed_reasons: retry.failed_reasons ?? (retryOn.includes('failed') ? [...DEFAULT_RETRIED_FAILURES] : []),
      retry_interval_sec: retry.interval_sec ?? DEFAULT_RETRY_INTERVAL_SEC,
      // Ids as the API writes them everywhere else (a UUID's letters may arrive in either case).
      contact_selection: JSON.stringify(
        body.contacts.contact_ids
          ? { contact_ids: body.contacts.contact_ids.map((id) => id.toLowerCase()) }
          : body.contacts,
      ),
      exclude_consent_capture: excluded,
      metadata: JSON.stringify(body.metadata ?? {}),
      idempotency_key: key ?? null,
      request_hash: key === undefined ? null : requestHash,
    });
    if (!inserted) {
      // Another request with the key committed its campaign while this one was checking.
      const existing = await campaigns.findCampaignByKey(trx, auth.orgId, key!);
      if (!existing) throw new Error('an Idempotency-Key conflicted with no campaign');
      return { campaign: await replay(trx, existing, requestHash), replayed: true };
    }
    const target = { id: inserted.id, orgId: auth.orgId, excluded };
    const { contact_ids: contactIds, filter } = body.contacts;
    let total: number;
    if (contactIds) {
      total = await campaigns.insertChosenContacts(trx, target, contactIds);
      if (total < contactIds.length) {
        const index = (await campaigns.firstUnknownContact(trx, auth.orgId, contactIds)) ?? 0;
        throw notFound('contact', `contacts.contact_ids.${index}`);
      }
    } else {
      total = await campaigns.insertFilteredContacts(trx, target, filter?.consent_capture);
    }
    if (total === 0) throw invalidField('contacts', 'chooses no contact: the filter matches none of your contacts');
    const row = await campaigns.setContactsTotal(trx, inserted.id, total);
    if (audit) await recordAudit(trx, audit(row.id));
    return { campaign: await withCounters(trx, row), replayed: false };
  });
}

/** The org's campaign row; throws not_found (param id) for an unknown or foreign id. */
async function requireCampaign(db: Db, orgId: string, id: string): Promise<campaigns.CampaignRow> {
  const row = await campaigns.findCampaignRow(db, orgId, id);
  if (!row) throw notFound('campaign');
  return row;
}

/**
 * The id and name of the org's campaign with this id, without its counters (for a filter naming it).
 * Throws not_found naming `param` when the org has none.
 */
export async function requireCampaignRef(
  db: Db,
  orgId: string,
  id: string,
  param: string,
): Promise<{ id: string; name: string }> {
  const row = await campaigns.findCampaignRow(db, orgId, id);
  if (!row) throw notFound('campaign', param);
  return { id: row.id, name: row.name };
}

/** The org's campaign with its counters. Throws not_found (param id). */
export async function getCampaign(db: Db, orgId: string, id: string): Promise<Campaign> {
  return withCounters(db, await requireCampaign(db, orgId, id));
}

/**
 * One page of the org's campaigns (in `status` when given), newest first, with their counters (one
 * statement for the page); a cursor must be a campaign of the org (else invalid_request).
 */
export async function listCampaigns(
  db: Db,
  orgId: string,
  page: { limit: number; status: CampaignStatus | undefined } & PageStart,
): Promise<{ items: Campaign[]; total: number; more: boolean }> {
  if ('cursor' in page && !(await campaigns.hasCampaignId(db, orgId, page.cursor))) throw unknownCursor(page.side);
  const { rows, total, more } = await campaigns.listCampaignRows(db, orgId, page);
  const counters = await campaigns.campaignCounters(
    db,
    rows.map((row) => row.id),
  );
  const items = rows.map((row) => {
    const found = counters.get(row.id);
    if (!found) throw new Error(`campaign ${row.id} has no contacts`);
    return toCampaign(row, found);
  });
  return { items, total, more };
}

/** The invalid_state answer for an action on a campaign that has ended. */
function ended(status: CampaignStatus, action: string): DomainError {
  return new DomainError('invalid_state', `The campaign is ${status} and can no longer be ${action}.`);
}

/**
 * Pauses a scheduled or running campaign (paused_reason requested). A paused campaign is returned as it
 * is (its reason kept). Throws not_found (param id); invalid_state when completed or canceled.
 */
export async function pauseCampaign(db: Db, orgId: string, id: string): Promise<Campaign> {
  const paused = await campaigns.moveCampaign(db, { orgId, id }, ['scheduled', 'running'], {
    status: 'paused',
    pausedReason: 'requested',
  });
  if (paused) return withCounters(db, paused);
  const current = await requireCampaign(db, orgId, id);
  if (current.status === 'paused') return withCounters(db, current);
  throw ended(current.status, 'paused');
}

/**
 * Resumes a paused campaign, whatever paused it: running when its start has passed at `now`, else
 * scheduled. A scheduled or running campaign is returned as it is. Throws not_found (param id);
 * invalid_state when completed or canceled.
 */
export async function resumeCampaign(db: Db, orgId: string, id: string, now: Date): Promise<Campaign> {
  const resumed = await campaigns.resumeCampaignRow(db, { orgId, id }, now);
  if (resumed) return withCounters(db, resumed);
  const current = await requireCampaign(db, orgId, id);
  if (current.status === 'scheduled' || current.status === 'running') return withCounters(db, current);
  throw ended(current.status, 'resumed');
}

/**
 * Cancels a scheduled, running or paused campaign and, in the same transaction, its contacts still
 * waiting for a call; contacts being called are left to their calls' ends. Throws not_found (param id);
 * invalid_state when already completed or canceled. `audit` (when given) is written in the same transaction.
 */
export async function cancelCampaign(db: Db, orgId: string, id: string, audit?: AuditEntry): Promise<Campaign> {
  return db.transaction().execute(async (trx) => {
    const canceled = await campaigns.moveCampaign(trx, { orgId, id }, ['scheduled', 'running', 'paused'], {
      status: 'canceled',
      pausedReason: null,
    });
    if (!canceled) throw ended((await requireCampaign(trx, orgId, id)).status, 'canceled');
    await campaigns.cancelPendingContacts(trx, id);
    if (audit) await recordAudit(trx, audit);
    return withCounters(trx, canceled);
  });
}

/**
 * One page of the org's campaign's contacts in the campaign's order, and their total (the campaign's
 * contacts_total). Throws not_found (param id); invalid_request when a cursor names no contact of it.
 */
export async function listCampaignContacts(
  db: Db,
  orgId: string,
  id: string,
  page: { limit: number } & PageStart,
): Promise<{ items: CampaignContact[]; total: number; more: boolean }> {
  const campaign = await requireCampaign(db, orgId, id);
  if ('cursor' in page && !(await campaigns.hasCampaignContact(db, id, page.cursor))) throw unknownCursor(page.side);
  const { rows, more } = await campaigns.listCampaignContactRows(db, id, page);
  return { items: rows.map(toCampaignContact), total: campaign.contacts_total, more };
}
