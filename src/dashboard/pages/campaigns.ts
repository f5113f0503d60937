// Campaigns: the org's campaigns of the mode shown, newest first a page at a time, each with its progress;
// a campaign's page with its settings, counters and contacts; and, for admins, Pause, Resume and Cancel
// (after a confirmation page) through the same service as the API, each change in the audit log. The
// form that creates one is in ./campaigns-new.ts.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { components } from '../../../generated/openapi.js';
import {
  cancelCampaign,
  getCampaign,
  listCampaignContacts,
  listCampaigns,
  pauseCampaign,
  resumeCampaign,
} from '../../campaigns/service.js';
import type { Campaign } from '../../campaigns/mapper.js';
import { DomainError } from '../../errors.js';
import { recordAudit } from '../../audit/service.js';
import { wakeCampaign } from '../../campaigns/dispatch/worker.js';
import { findAgent } from '../../orgs/service.js';
import {
  action,
  formBody,
  pathParam,
  redirectAfterPost,
  sendPage,
  uuidParam,
  view,
  type DashboardEnv,
  type PageHandler,
} from '../route-steps.js';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { confirmationPage, csrfField, notice, page, tableBox } from '../layout.js';
import { doneLocation, doneOf } from '../done-notices.js';
import { count, minute, rupees } from '../format.js';
import { localMinute } from '../local-time.js';
import { outside, outsidePlain } from '../outside-text.js';
import { livemodeOf, type DashboardSession } from '../mode.js';
import { chosen, pageOf, pager, selectFilter } from './paging.js';

type Schemas = components['schemas'];

/** The path of the campaigns list. */
export const CAMPAIGNS = '/dashboard/campaigns';

const STATUSES = ['scheduled', 'running', 'paused', 'completed', 'canceled'] as const satisfies ReadonlyArray<
  Schemas['CampaignStatus']
>;

/** The path of a campaign's page. */
export function campaignPath(id: string): string {
  return `${CAMPAIGNS}/${id}`;
}

/** Who made a change, for its audit entry: in the org's log (of both modes), with the mode it was made in. */
export function auditedBy(ctx: Koa.Context, session: DashboardSession) {
  return { orgId: session.orgId, livemode: livemodeOf(session), actor: session.email, address: ctx.ip };
}

const UNTITLED = 'Untitled campaign';

/** The campaign's name as shown; a name of white space alone gets a stand-in, so its link has text. */
function nameOf(campaign: Campaign): HtmlValue {
  return campaign.name.trim() === '' ? UNTITLED : outside(campaign.name);
}

/** The campaign's name as its page's title shows it (see nameOf). */
function plainNameOf(campaign: Campaign): string {
  return campaign.name.trim() === '' ? UNTITLED : outsidePlain(campaign.name);
}

/** The status in words, with why a paused campaign is paused. */
function statusOf(campaign: Campaign): SafeHtml {
  if (campaign.status !== 'paused') return html`${campaign.status}`;
  const why = campaign.paused_reason === 'insufficient_credits' ? 'not enough credits' : 'paused by request';
  return html`<span class="state-bad">paused</span> (${why})`;
}

/** How many of the campaign's contacts are done with: called to a final ending, expired, canceled or skipped. */
function finalContacts(counters: Schemas['CampaignCounters']): number {
  const { completed, failed, no_answer: noAnswer, busy, expired, canceled, skipped } = counters;
  return completed + failed + noAnswer + busy + expired + canceled + skipped.total;
}

/** The progress bar, its accessible name `label`, with the same figures in text beside it. */
function progress(campaign: Campaign, label: string): SafeHtml {
  const total = campaign.counters.contacts_total;
  const done = finalContacts(campaign.counters);
  // Rounded to the nearest, but 100% only once every contact is done.
  const percent = done >= total ? 100 : Math.min(99, Math.round((done * 100) / total));
  return html`<progress max="${total}" value="${done}" aria-label="${label}">${percent}%</progress>
    <span class="progress-text"
      >${count(done)} of ${count(total)} ${total === 1 ? 'contact' : 'contacts'} done (${percent}%)</span
    >`;
}

/** The counters in one line, leaving out those at zero. */
function countersSummary(counters: Schemas['CampaignCounters']): string {
  const parts: Array<[number, string]> = [
    [counters.completed, 'completed'],
    [counters.in_progress, 'in progress'],
    [counters.pending, 'pending'],
    [counters.failed, 'failed'],
    [counters.no_answer, 'no answer'],
    [counters.busy, 'busy'],
    [counters.expired, 'expired'],
    [counters.canceled, 'canceled'],
    [counters.skipped.total, 'skipped'],
  ];
  const shown = parts.filter(([value]) => value > 0).map(([value, words]) => `${count(value)} ${words}`);
  return shown.length ? shown.join(' · ') : 'no contacts';
}

/** GET: the mode's campaigns, newest first, filtered by status, a page at a time. */
async function showCampaigns(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const status = chosen(ctx, 'status', STATUSES);
  const { page: number, limit, offset } = pageOf(ctx);
  const { items, total } = await listCampaigns(env.deps.db, session.modeOrgId, { limit, status, offset });
  const rows = items.map(
    (campaign) =>
      html`<tr>
        <td><a href="${campaignPath(campaign.id)}">${nameOf(campaign)}</a></td>
        <td>${statusOf(campaign)}</td>
        <td>${progress(campaign, 'Contacts done')}</td>
        <td>${countersSummary(campaign.counters)}</td>
        <td class="when">${minute(campaign.created_at)}</td>
      </tr>`,
  );
  const table = items.length
    ? tableBox(
        'Campaigns',
        html`<table>
          <caption class="muted">
            Campaigns, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Progress</th>
              <th scope="col">Contacts</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            ${rows}
          </tbody>
        </table>`,
      )
    : html`<p>No ${session.mode === 'test' ? 'test ' : ''}campaigns${status ? ` in status ${status}` : ''}.</p>`;
  const create =
    session.role === 'admin' ? html`<p><a class="button" href="${CAMPAIGNS}/new">New campaign</a></p>` : '';
  const body = html`${create} ${selectFilter(CAMPAIGNS, 'status', 'Status', STATUSES, status)} ${table}
  ${pager(CAMPAIGNS, { status }, number, { total })}`;
  sendPage(ctx, 200, page({ title: 'Campaigns', session, current: CAMPAIGNS, body }));
}

const DAY_NAMES: Record<Schemas['Weekday'], string> = {
  mon: 'Mon',
  tue: 'Tue',
  wed: 'Wed',
  thu: 'Thu',
  fri: 'Fri',
  sat: 'Sat',
  sun: 'Sun',
};

/** An instant in the campaign's zone, with UTC beside it. */
function zoned(at: string | null, zone: string): string {
  return at === null ? '—' : `${localMinute(at, zone)} (${minute(at)})`;
}

/** Which contacts the campaign was created with, in words. */
function chosenContacts(campaign: Campaign): string {
  const { contacts } = campaign;
  if ('contact_ids' in contacts && contacts.contact_ids) return `a list of ${count(contacts.contact_ids.length)}`;
  const consent = contacts.filter?.consent_capture;
  return consent ? `every contact with consent ${consent.join(', ')}` : 'every contact';
}

function settings(campaign: Campaign, agent: string): SafeHtml {
  const { schedule, retry } = campaign;
  const fact = (label: string, value: HtmlValue) =>
    html`<dt>${label}</dt>
      <dd>${value}</dd>`;
  const windows = html`<ul>
    ${schedule.windows.map(
      (window) => html`<li>${window.days.map((day) => DAY_NAMES[day]).join(', ')}: ${window.start}–${window.end}</li>`,
    )}
  </ul>`;
  const retried = retry.on.length
    ? `${retry.on.join(', ')}${retry.on.includes('failed') ? ` (failed for ${retry.failed_reasons.join(', ') || 'no reason'})` : ''}`
    : 'nothing';
  return html`<h2>Settings</h2>
    <dl class="facts">
      ${fact('Agent', outside(agent))} ${fact('Contacts', chosenContacts(campaign))}
      ${fact('Consent excluded', campaign.exclude_consent_capture.join(', ') || 'none')}
      ${fact('Time zone', outside(schedule.timezone))} ${fact('Starts', zoned(schedule.starts_at, schedule.timezone))}
      ${fact('Ends', schedule.ends_at === null ? 'no end' : zoned(schedule.ends_at, schedule.timezone))}
      ${fact('Calling windows', windows)} ${fact('Calls at once, at most', count(campaign.max_concurrency))}
      ${fact('Attempts per contact, at most', retry.max_attempts)} ${fact('Retried endings', retried)}
      ${fact('Wait between attempts', `${count(retry.interval_sec)} seconds`)}
      ${fact('Created', minute(campaign.created_at))} ${fact('Finished', minute(campaign.finished_at))}
    </dl>`;
}

function counters(campaign: Campaign): SafeHtml {
  const { counters: c } = campaign;
  const fact = (label: string, value: string) =>
    html`<dt>${label}</dt>
      <dd>${value}</dd>`;
  return html`<h2>Counters</h2>
    <p>${progress(campaign, 'Contacts done')}</p>
    <dl class="facts">
      ${fact('Contacts in all', count(c.contacts_total))} ${fact('Pending', count(c.pending))}
      ${fact('In progress', count(c.in_progress))} ${fact('Completed', count(c.completed))}
      ${fact('Failed', count(c.failed))} ${fact('No answer', count(c.no_answer))} ${fact('Busy', count(c.busy))}
      ${fact('Expired', count(c.expired))} ${fact('Canceled', count(c.canceled))}
      ${fact(
        'Skipped',
        `${count(c.skipped.total)} (${count(c.skipped.suppressed)} on the do-not-call list, ${count(c.skipped.consent_excluded)} by consent)`,
      )}
      ${fact('Calls placed', count(c.calls_placed))} ${fact('Credits charged', rupees(c.credits_charged_paise))}
    </dl>
    <p><a href="/dashboard/calls?campaign_id=${campaign.id}">View calls</a></p>`;
}

/** The admin's buttons for the campaign's status: Pause or Resume, and Cancel, until it has ended. */
function controls(campaign: Campaign, session: DashboardSession): HtmlValue {
  if (session.role !== 'admin' || campaign.status === 'completed' || campaign.status === 'canceled') return '';
  const path = campaignPath(campaign.id);
  const step =
    campaign.status === 'paused'
      ? html`<form class="inline" method="post" action="${path}/resume">
          ${csrfField(session)}<button type="submit">Resume</button>
        </form>`
      : html`<form class="inline" method="post" action="${path}/pause">
          ${csrfField(session)}<button type="submit" class="secondary">Pause</button>
        </form>`;
  return html`<div class="controls">${step} <a class="button danger" href="${path}/cancel">Cancel campaign</a></div>`;
}

function contactState(contact: Schemas['CampaignContact']): string {
  if (contact.state !== 'skipped') return contact.state;
  return contact.skip_reason === 'suppressed' ? 'skipped (do-not-call list)' : 'skipped (consent excluded)';
}

async function contactsSection(
  env: DashboardEnv,
  ctx: Koa.Context,
  session: DashboardSession,
  campaign: Campaign,
): Promise<SafeHtml> {
  const { page: number, limit, offset } = pageOf(ctx);
  const { items, total } = await listCampaignContacts(env.deps.db, session.modeOrgId, campaign.id, {
    limit,
    offset,
  });
  const rows = items.map(
    (contact) =>
      html`<tr>
        <td>${contact.position}</td>
        <td>${outside(contact.phone_e164)}</td>
        <td>${contactState(contact)}</td>
        <td>${contact.attempts}</td>
        <td>
          ${
            contact.last_call_id
              ? html`<a href="/dashboard/calls/${contact.last_call_id}"
                  >${contact.last_outcome ?? 'in progress'}${
                    contact.last_reason && contact.last_reason !== contact.last_outcome
                      ? ` (${contact.last_reason})`
                      : ''
                  }</a
                >`
              : '—'
          }
        </td>
        <td class="when">${minute(contact.next_attempt_at)}</td>
      </tr>`,
  );
  const table = items.length
    ? tableBox(
        'Contacts',
        html`<table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Phone</th>
              <th scope="col">State</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last call</th>
              <th scope="col">Next attempt</th>
            </tr>
          </thead>
          <tbody>
            ${rows}
          </tbody>
        </table>`,
      )
    : html`<p>No contacts on this page.</p>`;
  return html`<h2>Contacts</h2>
    ${table} ${pager(campaignPath(campaign.id), {}, number, { total })}`;
}

/** What the campaign's page says after a form sent the browser back to it (`?done=`). */
const DONE_NOTICES = new Map([
  ['created', 'Campaign created. It calls its contacts inside its windows from its start.'],
  ['paused', 'Campaign paused: no new calls are placed; calls already in progress go on to their end.'],
  ['already-paused', 'Nothing changed: the campaign was already paused.'],
  ['resumed', 'Campaign resumed: it calls again inside its windows (from its start, if that is still to come).'],
  ['already-resumed', 'Nothing changed: the campaign was not paused.'],
  [
    'canceled',
    'Campaign canceled: its contacts still waiting were canceled and are not called; calls already in progress go on to their end.',
  ],
]);

function campaignId(ctx: Koa.Context): string {
  return uuidParam(pathParam(ctx, 'id'), 'campaign');
}

/** GET: one campaign's settings, counters, progress and contacts, with its controls for admins. */
async function showCampaign(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const campaign = await getCampaign(env.deps.db, session.modeOrgId, campaignId(ctx));
  // Agents are the live org's and serve both modes.
  const agent = await findAgent(env.deps.db, session.orgId, campaign.agent_id);
  const done = DONE_NOTICES.get(doneOf(ctx, session) ?? '');
  const body = html`${done ? notice('info', done) : ''}
    <p>Status: ${statusOf(campaign)}</p>
    ${controls(campaign, session)} ${counters(campaign)}
    ${settings(campaign, agent ? `${agent.name} (${agent.id})` : campaign.agent_id)}
    ${await contactsSection(env, ctx, session, campaign)}
    <p><a href="${CAMPAIGNS}">All campaigns</a></p>`;
  const title = `${plainNameOf(campaign)} · Campaign`;
  sendPage(ctx, 200, page({ title, heading: nameOf(campaign), session, current: CAMPAIGNS, body }));
}

/**
 * A POST handler that pauses or resumes the campaign and, when that changed it, writes the audit entry
 * `campaign.<step>d` in the same transaction; then back to its page saying what happened.
 */
function moveCampaign(step: 'pause' | 'resume'): PageHandler {
  return async (ctx, session, env) => {
    const id = campaignId(ctx);
    const changed = await env.deps.db.transaction().execute(async (trx) => {
      const before = await getCampaign(trx, session.modeOrgId, id);
      const after =
        step === 'pause'
          ? await pauseCampaign(trx, session.modeOrgId, id)
          : await resumeCampaign(trx, session.modeOrgId, id, env.deps.clock.now());
      if (after.status === before.status) return false;
      await recordAudit(trx, { ...auditedBy(ctx, session), action: `campaign.${step}d`, target: id });
      return true;
    });
    // A resumed campaign's dispatch waits for nothing.
    if (changed && step === 'resume') await wakeCampaign(env.deps, id);
    redirectAfterPost(ctx, doneLocation(campaignPath(id), session, changed ? `${step}d` : `already-${step}d`));
  };
}

/** GET: the page asking to confirm the campaign's cancellation. */
async function confirmCancel(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const campaign = await getCampaign(env.deps.db, session.modeOrgId, campaignId(ctx));
  if (campaign.status === 'completed' || campaign.status === 'canceled') {
    throw new DomainError('invalid_state', `This campaign is ${campaign.status}: there is nothing left to cancel.`);
  }
  const waiting = campaign.counters.pending;
  const question = html`Cancel the campaign ${nameOf(campaign)}? Its ${count(waiting)}
  ${waiting === 1 ? 'contact' : 'contacts'} still waiting will not be called; calls in progress go on to their end. This
  cannot be undone.`;
  const confirmation = confirmationPage({
    title: 'Cancel campaign',
    session,
    current: CAMPAIGNS,
    question,
    action: `${campaignPath(campaign.id)}/cancel`,
    button: 'Cancel campaign',
    cancel: campaignPath(campaign.id),
    cancelLabel: 'Keep the campaign',
  });
  sendPage(ctx, 200, confirmation);
}

/** POST: cancels the campaign (invalid_state when it has ended), audited, and back to its page. */
async function cancel(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const id = campaignId(ctx);
  await cancelCampaign(env.deps.db, session.modeOrgId, id, {
    ...auditedBy(ctx, session),
    action: 'campaign.canceled',
    target: id,
  });
  await wakeCampaign(env.deps, id);
  redirectAfterPost(ctx, doneLocation(campaignPath(id), session, 'canceled'));
}

/** Registers the campaigns list, a campaign's page and its controls (the form to create one registers itself). */
export function campaignRoutes(router: Router, env: DashboardEnv): void {
  router.get(CAMPAIGNS, view(env, showCampaigns));
  router.get(`${CAMPAIGNS}/:id`, view(env, showCampaign));
  router.post(`${CAMPAIGNS}/:id/pause`, formBody, action(env, moveCampaign('pause')));
  router.post(`${CAMPAIGNS}/:id/resume`, formBody, action(env, moveCampaign('resume')));
  router.get(`${CAMPAIGNS}/:id/cancel`, view(env, confirmCancel, { adminOnly: true }));
  router.post(`${CAMPAIGNS}/:id/cancel`, formBody, action(env, cancel));
}
