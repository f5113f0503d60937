// Calls: the org's calls of the mode shown, newest first, filtered by status and by campaign (the link
// from a campaign's page), a page at a time; and each call's detail (facts, LLM fields, credits
// debited, transcript, timeline).
import type Router from '@koa/router';
import type Koa from 'koa';
import { getCall, listCalls } from '../../calls/service.js';
import { requireCampaignRef } from '../../campaigns/service.js';
import { toCallDetail } from '../../calls/mapper.js';
import { findAgent } from '../../orgs/service.js';
import { CALL_STATUSES } from '../../calls/status.js';
import type { DashboardSession } from '../mode.js';
import { sendPage, uuidParam, view, pathParam, type DashboardEnv } from '../route-steps.js';
import { html, type SafeHtml } from '../html.js';
import { page, tableBox } from '../layout.js';
import { callTime, minute, rupees, second } from '../format.js';
import { outside, outsideBlock } from '../outside-text.js';
import { chosen, pageOf, pager, selectFilter } from './paging.js';
import { campaignPath } from './campaigns.js';

const CURRENT = '/dashboard/calls';

/** The campaign `?campaign_id=` names, of the mode shown; none when absent; not_found when it names none. */
async function chosenCampaign(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv) {
  const value = ctx.query.campaign_id;
  if (value === undefined || value === '') return undefined;
  const id = uuidParam(typeof value === 'string' ? value : undefined, 'campaign');
  return requireCampaignRef(env.deps.db, session.modeOrgId, id, 'campaign_id');
}

/** Which campaign the list shows, with links to its page and to every call. */
function campaignLine(campaign: { id: string; name: string }, status: string | undefined): SafeHtml {
  const everyCall = status ? `${CURRENT}?status=${status}` : CURRENT;
  return html`<p>
    Calls of the campaign <a href="${campaignPath(campaign.id)}">${outside(campaign.name)}</a>.
    <a href="${everyCall}">All calls</a>
  </p>`;
}

/** GET: the org's calls, newest first, filtered by status and campaign, a page at a time. */
async function showCalls(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const status = chosen(ctx, 'status', CALL_STATUSES);
  const campaign = await chosenCampaign(ctx, session, env);
  const campaignId = campaign?.id;
  const { page: number, limit, offset } = pageOf(ctx);
  const { rows, total } = await listCalls(env.deps.db, session.modeOrgId, {
    status,
    campaignId,
    limit,
    start: { offset },
  });
  const body = html`${campaign ? campaignLine(campaign, status) : ''}
  ${selectFilter(CURRENT, 'status', 'Status', CALL_STATUSES, status, { campaign_id: campaignId })}
  ${
    rows.length
      ? tableBox(
          'Calls',
          html`<table>
            <thead>
              <tr>
                <th scope="col">Created</th>
                <th scope="col">To</th>
                <th scope="col">Status</th>
                <th scope="col">Duration</th>
                <th scope="col">Credits</th>
                <th scope="col">Call</th>
              </tr>
            </thead>
            <tbody>
              ${rows.map(
                (call) =>
                  html`<tr>
                    <td class="when">${minute(call.created_at)}</td>
                    <td>${outside(call.to_e164)}</td>
                    <td>${call.status}</td>
                    <td>${call.duration_sec === null ? '—' : `${call.duration_sec} s`}</td>
                    <td>${rupees(call.credits_debited_paise)}</td>
                    <td><a href="${CURRENT}/${call.id}" class="mono">${call.id}</a></td>
                  </tr>`,
              )}
            </tbody>
          </table>`,
        )
      : html`<p>No calls${campaign ? ' of this campaign' : ''}${status ? ` in status ${status}` : ''}.</p>`
  }
  ${pager(CURRENT, { status, campaign_id: campaignId }, number, { total })}`;
  sendPage(ctx, 200, page({ title: 'Calls', session, current: CURRENT, body }));
}

/** GET: one call's facts, LLM fields, credits, transcript and timeline. */
async function showCall(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const { call: row, timeline } = await getCall(
    env.deps.db,
    session.modeOrgId,
    uuidParam(pathParam(ctx, 'id'), 'call'),
  );
  const call = toCallDetail(row, timeline);
  // Agents are the live org's and serve both modes.
  const agent = await findAgent(env.deps.db, session.orgId, call.agent_id);
  const fact = (label: string, value: string | number | null) =>
    html`<dt>${label}</dt>
      <dd>${value === null ? '—' : outside(String(value))}</dd>`;
  const transcript = call.transcript?.length
    ? html`<ol>
        ${call.transcript.map((turn) => html`<li><strong>${outside(turn.role)}</strong> (${callTime(turn.start_ms)}): ${outside(turn.text)}</li>`)}
      </ol>`
    : html`<p>No transcript${call.status === 'completed' ? '' : ' (only completed calls have one)'}.</p>`;
  const body = html`<dl class="facts">
      ${fact('Status', call.status)}${fact('From', call.from_e164)}${fact('To', call.to_e164)}${fact('Agent', agent ? `${agent.name} (${call.agent_id})` : call.agent_id)}
      ${fact('Provider', call.provider)}${fact('Provider call id', call.provider_call_id)}
      ${fact('Language', call.language)}${fact('Created', second(call.created_at))}
      ${fact('Started', call.started_at && second(call.started_at))}${fact('Ended', call.ended_at && second(call.ended_at))}
      ${fact('Duration', call.duration_sec === null ? null : `${call.duration_sec} s`)}${fact('Credits debited', rupees(call.credits_debited_paise))}
      ${fact('End reason', call.reason)}${fact('Recording', call.recording_url)}
      ${fact('Intent (LLM)', call.llm_extracted_intent)}${fact('Sentiment (LLM)', call.llm_sentiment)}${fact('Outcome (LLM)', call.llm_outcome)}
      <dt>Metadata</dt>
      <dd>${outsideBlock(JSON.stringify(call.metadata ?? {}, null, 2))}</dd>
    </dl>
    <h2>Transcript</h2>
    ${transcript}
    <h2>Timeline</h2>
    ${tableBox(
      'Timeline',
      html`<table>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">What</th>
            <th scope="col">Detail</th>
          </tr>
        </thead>
        <tbody>
          ${call.timeline.map(
            (entry) =>
              html`<tr>
                <td class="when">${second(entry.at)}</td>
                <td>${outside(entry.kind)}</td>
                <td>${outsideBlock(JSON.stringify(entry.detail))}</td>
              </tr>`,
          )}
        </tbody>
      </table>`,
    )}
    <p><a href="${CURRENT}">All calls</a></p>`;
  sendPage(ctx, 200, page({ title: 'Call', session, current: CURRENT, body }));
}

/** Registers the calls list and the call detail pages. */
export function callRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showCalls));
  router.get(`${CURRENT}/:id`, view(env, showCall));
}
