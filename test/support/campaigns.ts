// Helpers for the campaign tests: contacts made through the API, a campaign created through the API (or
// written as a bare row, for migration tests), and direct reads of a campaign's calls and contacts.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Client } from 'openapi-fetch';
import type { components, paths } from '../../generated/openapi.js';
import type { Db } from '../../src/database/connect.js';

type Schemas = components['schemas'];

/** Creates one contact per number through POST /contacts; returns their ids in order. */
export async function createContacts(
  client: Client<paths>,
  numbers: string[],
  consent: Schemas['ContactUpsert']['consent_capture'] = 'manual',
): Promise<string[]> {
  const ids: string[] = [];
  for (const phone of numbers) {
    const { data, error } = await client.POST('/contacts', { body: { phone_e164: phone, consent_capture: consent } });
    if (!data) throw new Error(`POST /contacts failed: ${JSON.stringify(error)}`);
    ids.push(data.data.id);
  }
  return ids;
}

/** Every day of the week, all day: a campaign that may always dial. */
export const ALWAYS: Schemas['CampaignWindow'][] = [
  { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' },
];

/** Creates a campaign through POST /campaigns; throws on any error answer. */
export async function createCampaign(
  client: Client<paths>,
  body: Partial<Schemas['CampaignCreate']> & Pick<Schemas['CampaignCreate'], 'agent_id' | 'contacts'>,
): Promise<Schemas['Campaign']> {
  const { data, error } = await client.POST('/campaigns', {
    body: { name: 'Test campaign', schedule: { timezone: 'Asia/Kolkata', windows: ALWAYS }, ...body },
  });
  if (!data) throw new Error(`POST /campaigns failed: ${JSON.stringify(error)}`);
  return data.data;
}

/** Reads a campaign through GET /campaigns/{id}; throws on any error answer. */
export async function fetchCampaign(client: Client<paths>, id: string): Promise<Schemas['Campaign']> {
  const { data, error } = await client.GET('/campaigns/{id}', { params: { path: { id } } });
  if (!data) throw new Error(`GET /campaigns/${id} failed: ${JSON.stringify(error)}`);
  return data.data;
}

/** The campaign.finished events of the campaign, as GET /events lists them. */
export async function finishedEvents(
  client: Client<paths>,
  campaignId: string,
): Promise<Array<{ id: string; data: Schemas['Campaign'] }>> {
  const { data, error } = await client.GET('/events', { params: { query: { kind: 'campaign.finished' } } });
  if (!data) throw new Error(`GET /events failed: ${JSON.stringify(error)}`);
  const finished = data.data.flatMap((event) => (event.event === 'campaign.finished' ? [event] : []));
  return finished.filter((event) => event.data.id === campaignId);
}

/** The calls a campaign placed: id, number, contact, attempt and status, in the order they were made. */
export async function campaignCalls(
  db: Db,
  campaignId: string,
): Promise<Array<{ id: string; to_e164: string; attempt: number; status: string; contact_id: string }>> {
  const { rows } = await sql<{ id: string; to_e164: string; attempt: number; status: string; contact_id: string }>`
    SELECT id, to_e164, campaign_attempt AS attempt, status, campaign_contact_id AS contact_id
    FROM calls WHERE campaign_id = ${campaignId} ORDER BY created_at, campaign_attempt`.execute(db);
  return rows;
}

/** The campaign's calls not yet ended plus its placements still with the provider. */
export async function campaignCallsInProgress(db: Db, campaignId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT (SELECT count(*) FROM calls WHERE campaign_id = ${campaignId}
              AND status IN ('queued', 'dialing', 'ringing', 'in_progress'))::int
         + (SELECT count(*) FROM call_placements WHERE campaign_id = ${campaignId})::int AS n`.execute(db);
  return rows[0]!.n;
}

/** A campaign of `org` written as a bare row (nothing dispatches it), for a schema of any later migration. */
export async function insertCampaignRow(
  db: Db,
  org: { orgId: string; agentId: string },
  name: string,
): Promise<string> {
  const id = randomUUID();
  await sql`INSERT INTO campaigns (id, org_id, agent_id, name, starts_at, timezone, windows, max_concurrency,
              max_attempts, retry_interval_sec, contact_selection)
            VALUES (${id}, ${org.orgId}, ${org.agentId}, ${name}, now(), 'UTC', '[]', 5, 3, 60, '{}')`.execute(db);
  return id;
}
