// What the spec says in prose about valid requests, applied to generated ones so they stay valid:
// referenced agents must exist, webhook URLs must be deliverable, Idempotency-Keys are single-use
// per body, `consent_capture` is required for a new contact, the simulator refuses numbers ending 0005,
// a list's cursor must name one of its items, a `campaign_id` filter must name a campaign of the org,
// and a campaign's contacts must be the org's and its schedule coherent (the check's campaigns start a
// year ahead, so nothing is dialed).
import { campaignSchedule, NO_ENDPOINT, type Fixtures } from './fixtures.js';
import type { Expectation } from './judge.js';
import type { RequestInput } from './request.js';
import type { Operation } from './spec/operations.js';

/** A generated request made valid for this deployment, what it should get, and why not success (for a note). */
export interface Pinned {
  input: RequestInput;
  expectation: Expectation;
  unreachable?: string;
}

let counter = 0;
const runTag = Math.random().toString(36).slice(2, 8);

/** A token unique within this process, safe inside any header or field. */
export function unique(): string {
  counter += 1;
  return `${runTag}${counter}`;
}

/** Applies the prose rules to a generated valid request of `operation`. */
export async function pinValid(operation: Operation, input: RequestInput, fixtures: Fixtures): Promise<Pinned> {
  const pinned: RequestInput = { ...input, headers: { ...input.headers } };
  let expectation: Expectation = { kind: 'success' };
  let unreachable: string | undefined;
  if ('Idempotency-Key' in pinned.headers) {
    pinned.headers['Idempotency-Key'] = `${pinned.headers['Idempotency-Key'].slice(0, 200)}.${unique()}`;
  }
  if ('starting_after' in pinned.query || 'ending_before' in pinned.query) {
    // A cursor must name an item of the list and excludes the other cursor and an offset: a generated
    // id names nothing, so generated requests page by offset (the paging scenario walks the cursors).
    const { starting_after: _after, ending_before: _before, ...query } = pinned.query;
    pinned.query = query;
  }
  if ('campaign_id' in pinned.query) {
    // A filter naming no campaign of the org is not_found: filter by the check's own campaign.
    const campaignId = await fixtures.campaign();
    if (campaignId) pinned.query = { ...pinned.query, campaign_id: campaignId };
    else {
      expectation = { kind: 'error', status: 404, code: 'not_found', param: 'campaign_id' };
      unreachable = await fixtures.unavailable('campaigns');
    }
  }
  if (pinned.body && typeof pinned.body === 'object' && !Array.isArray(pinned.body)) {
    const body = { ...(pinned.body as Record<string, unknown>) };
    if ('agent_id' in body) {
      // The API cannot create agents: without one in the org the generated id names no agent of it.
      const agentId = await fixtures.agent();
      if (agentId) body.agent_id = agentId;
      else {
        expectation = { kind: 'error', status: 404, code: 'not_found', param: 'agent_id' };
        unreachable = fixtures.noAgent;
      }
    }
    if (typeof body.url === 'string') {
      const target = fixtures.webhooks;
      if (!('refusedUrl' in target)) body.url = target.url;
      else {
        // The URL the server refused when probed: it must refuse it here too, as the spec documents.
        body.url = target.refusedUrl;
        expectation = { kind: 'error', status: 400, code: 'invalid_request', param: 'url' };
        unreachable = NO_ENDPOINT;
      }
    }
    if (typeof body.to_e164 === 'string' && body.to_e164.endsWith('0005'))
      body.to_e164 = `${body.to_e164.slice(0, -1)}6`;
    if (operation.id === 'upsertContact' && typeof body.phone_e164 === 'string' && !('consent_capture' in body)) {
      const known = await fixtures.contactPhone();
      if (known) body.phone_e164 = known;
      else body.consent_capture = 'manual';
    }
    if (operation.id === 'createCampaign') {
      const contactId = await fixtures.contactId();
      if (contactId) body.contacts = { contact_ids: [contactId] };
      body.schedule = campaignSchedule();
      // failed_reasons apply only when failed is retried, and retried endings need a second attempt.
      const { failed_reasons: _reasons, ...retry } = (body.retry ?? {}) as {
        on?: string[];
        max_attempts?: unknown;
        failed_reasons?: unknown;
      };
      if (body.retry && !retry.on?.includes('failed')) body.retry = retry;
      if (body.retry && (retry.on ?? []).length > 0 && !(Number(retry.max_attempts) >= 2))
        body.retry = { ...body.retry, max_attempts: 2 };
    }
    pinned.body = body;
  }
  return { input: pinned, expectation, ...(unreachable ? { unreachable } : {}) };
}
