// The demo org the documentation's screenshots show, made as an operator and a customer would make it:
// the org, its agent, members and keys through the service's own functions (as the CLI does), and its
// endpoint, do-not-call list, contacts, calls and campaigns through the public API. Calls go to the
// simulator, whose number endings pick the outcome (0001 busy, 0002 no answer).
import type { Db } from '../../src/database/connect.js';
import { CLI_ACTOR } from '../../src/audit/service.js';
import { createAgent, createOrg } from '../../src/orgs/service.js';
import { createApiKey, revokeKey } from '../../src/orgs/api-keys.js';
import { acceptLink, inviteMember, linkPath } from '../../src/members/service.js';

/** A password the dashboard accepts, for the members who have signed up. */
export const DEMO_PASSWORD = 'correct horse battery staple';

/** What the screenshots need to find in the demo org. */
export interface Demo {
  /** The path of the admin's one-time sign-in link. */
  adminLink: string;
  endpointId: string;
  /** A completed call with a transcript. */
  callId: string;
  /** A campaign that has called all its contacts. */
  campaignId: string;
}

const BY = { actor: CLI_ACTOR, address: null };
const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const TERMINAL = new Set(['completed', 'failed', 'no_answer', 'busy', 'canceled']);

/** The public API at `apiUrl`, called with one key. */
function apiClient(apiUrl: string, key: string) {
  return async <T = { id: string; status: string }>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${apiUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
    return (JSON.parse(text) as { data: T }).data;
  };
}

/** Waits, polling every 100 ms up to `timeoutMs`, until `done` resolves true. */
async function until(what: string, done: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Makes the demo org and waits until its calls and its first campaign have ended. */
export async function makeDemo(db: Db, apiUrl: string, receiverOrigin: string): Promise<Demo> {
  const org = await createOrg(db, { name: 'Acme Lending', creditsPaise: 500_000, planId: 'scale' });
  const agent = await createAgent(db, { orgId: org.id, name: 'Renewals agent', language: 'en-IN' });

  const admin = await inviteMember(db, { orgId: org.id, email: 'asha@acme.example', role: 'admin' }, BY);
  const viewer = await inviteMember(db, { orgId: org.id, email: 'ravi@acme.example', role: 'viewer' }, BY);
  await acceptLink(db, viewer.token, DEMO_PASSWORD);
  await inviteMember(db, { orgId: org.id, email: 'meera@acme.example', role: 'viewer' }, BY);

  const live = await createApiKey(db, org.id, { label: 'Production backend', mode: 'live' }, BY);
  const old = await createApiKey(db, org.id, { label: 'Old staging server', mode: 'live' }, BY);
  await revokeKey(db, old.prefix, BY, { liveOrgId: org.id });
  const test = await createApiKey(db, org.id, { label: 'CI', mode: 'test' }, BY);

  const api = apiClient(apiUrl, live.key);
  const endpoint = await api('POST', '/webhooks', {
    url: `${receiverOrigin}/hooks/crm`,
    events: ['call.completed', 'call.failed', 'call.no_answer', 'call.busy', 'campaign.finished'],
  });

  await api('POST', '/suppressions', {
    phone_e164: '+919876500013',
    reason: 'opted_out',
    note: 'Asked on a call not to be called again',
  });
  await api('POST', '/suppressions', { phone_e164: '+919812300044', reason: 'do_not_call_registry' });
  await api('POST', '/suppressions', {
    phone_e164: '+919845600077',
    reason: 'wrong_number',
    note: 'Number now belongs to someone else',
  });

  const people: Array<[string, string, string, string]> = [
    ['Ananya Iyer', '+919876500021', 'ta-IN', 'website_form'],
    ['Rohan Mehta', '+919876500034', 'hi-IN', 'pre_call'],
    ['Fatima Sheikh', '+919876500013', 'hi-IN', 'website_form'],
    ['Karthik Rao', '+919876500047', 'en-IN', 'manual'],
    ['Priya Nair', '+919876500002', 'en-IN', 'website_form'],
    ['Vikram Singh', '+919876500058', 'hi-IN', 'imported'],
    ['Deepa Joshi', '+919876500069', 'en-IN', 'website_form'],
  ];
  const contacts: string[] = [];
  for (const [index, [name, phone, language, consent]] of people.entries()) {
    const email = `${name.split(' ')[0]!.toLowerCase()}@example.com`;
    const contact = await api('POST', '/contacts', {
      phone_e164: phone,
      name,
      email,
      language_pref: language,
      consent_capture: consent,
      metadata: { customer_id: `C-${1040 + index}` },
    });
    contacts.push(contact.id);
  }

  const calls: string[] = [];
  for (const to of ['+919876543210', '+919812345678', '+919876500001', '+919898700002']) {
    calls.push((await api('POST', '/calls', { agent_id: agent.id, to_e164: to, metadata: { loan_id: 'L-2291' } })).id);
  }
  const testApi = apiClient(apiUrl, test.key);
  for (const to of ['+919876511110', '+919876522220'])
    await testApi('POST', '/calls', { agent_id: agent.id, to_e164: to });

  const everyDay = { timezone: 'Asia/Kolkata', windows: [{ days: EVERY_DAY, start: '00:00', end: '24:00' }] };
  const nextMonth = new Date(Date.now() + 30 * 86_400_000).toISOString();
  const weekdays = {
    starts_at: nextMonth,
    timezone: 'Asia/Kolkata',
    windows: [{ days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '10:00', end: '18:00' }],
  };
  const renewals = await api('POST', '/campaigns', {
    name: 'November renewals',
    agent_id: agent.id,
    contacts: { contact_ids: contacts.slice(0, 6) },
    exclude_consent_capture: ['imported'],
    schedule: everyDay,
    max_concurrency: 2,
  });
  await api('POST', '/campaigns', {
    name: 'Festive offer',
    agent_id: agent.id,
    contacts: { filter: { consent_capture: ['website_form'] } },
    schedule: weekdays,
  });
  const reminders = await api('POST', '/campaigns', {
    name: 'Payment reminders',
    agent_id: agent.id,
    contacts: { contact_ids: contacts.slice(3) },
    schedule: weekdays,
    retry: { max_attempts: 3, on: ['busy', 'no_answer'], interval_sec: 1800 },
  });
  await api('POST', `/campaigns/${reminders.id}/pause`);

  await until('the calls to end', async () => {
    const listed = await api<Array<{ status: string }>>('GET', '/calls?limit=100');
    return listed.every((call) => TERMINAL.has(call.status));
  });
  await until('the renewals campaign to finish', async () => {
    const campaign = await api<{ finished_at: string | null }>('GET', `/campaigns/${renewals.id}`);
    return campaign.finished_at !== null;
  });
  return { adminLink: linkPath(admin.token), endpointId: endpoint.id, callId: calls[0]!, campaignId: renewals.id };
}
