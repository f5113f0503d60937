// The form that creates a campaign in the mode shown (admins only): name, agent, the contacts by a consent
// filter or by a CSV of contact ids or numbers, consent to exclude, start and end as local times in a
// picked time zone, a few calling windows (rows to fill, no script needed), concurrency and retries. It
// is checked against the spec's CampaignCreate and then by the same service as the API; whatever is
// refused is shown next to its field, and the form comes back as it was sent.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { components } from '../../../generated/openapi.js';
import { campaignCreateProblems, createCampaign } from '../../campaigns/service.js';
import { wakeCampaign } from '../../campaigns/dispatch/worker.js';
import { MAX_CONTACT_IDS } from '../../campaigns/policy.js';
import { listAgents } from '../../orgs/service.js';
import { messagesByField } from '../../contract/validation-messages.js';
import { DomainError } from '../../errors.js';
import {
  action,
  field,
  fields,
  formBody,
  redirectAfterPost,
  sendPage,
  view,
  type DashboardEnv,
} from '../route-steps.js';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { csrfField, notice, onceField, page, tableBox } from '../layout.js';
import { doneLocation } from '../done-notices.js';
import { outside } from '../outside-text.js';
import { instantOfLocal, zoneNames } from '../local-time.js';
import { isKnownTimeZone } from '../../campaigns/schedule.js';
import type { DashboardSession } from '../mode.js';
import { CAMPAIGNS, auditedBy, campaignPath } from './campaigns.js';
import { CAMPAIGN_CSV_COLUMNS, contactsOfCsv, type CsvLineProblem } from './campaigns-csv.js';

type Schemas = components['schemas'];

const CURRENT = `${CAMPAIGNS}/new`;
/** The zone the picker starts on, unless the browser says its own (the dashboard's script). */
const DEFAULT_ZONE = 'Asia/Kolkata';
/** How many window rows the form offers; rows left empty are not sent. */
const WINDOW_ROWS = 4;
const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const satisfies ReadonlyArray<Schemas['Weekday']>;
const DAY_LABELS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const CONSENTS = ['pre_call', 'website_form', 'manual', 'imported'] as const satisfies ReadonlyArray<
  Schemas['ConsentCapture']
>;
const ENDINGS = ['busy', 'no_answer', 'failed'] as const satisfies ReadonlyArray<Schemas['RetryableEnding']>;
const FAILURES = ['provider_error', 'timeout'] as const satisfies ReadonlyArray<Schemas['RetryableFailureReason']>;

/** The form's values as sent (or as first shown). */
interface FormValues {
  name: string;
  agentId: string;
  source: 'filter' | 'csv';
  consent: string[];
  csv: string;
  exclude: string[];
  startsAt: string;
  endsAt: string;
  timezone: string;
  windows: Array<{ days: string[]; start: string; end: string }>;
  maxConcurrency: string;
  maxAttempts: string;
  retryOn: string[];
  failedReasons: string[];
  intervalSec: string;
}

const FRESH: FormValues = {
  name: '',
  agentId: '',
  source: 'filter',
  consent: [],
  csv: '',
  exclude: [],
  startsAt: '',
  endsAt: '',
  timezone: DEFAULT_ZONE,
  windows: [
    { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '18:00' },
    ...Array.from({ length: WINDOW_ROWS - 1 }, () => ({ days: [], start: '', end: '' })),
  ],
  maxConcurrency: '10',
  maxAttempts: '1',
  retryOn: [],
  failedReasons: [],
  intervalSec: '3600',
};

/** What the form says is wrong: messages by the id of the field they are about, and the CSV's rows. */
interface Problems {
  byField: Map<string, string[]>;
  csvLines: CsvLineProblem[];
  /** Said once above the form (a refusal about no one field). */
  general: string | null;
}

/** What each field is called where the summary above the form links to it. */
const FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  agent_id: 'Agent',
  consent: 'Contacts by consent',
  csv: 'Contacts by CSV',
  exclude: 'Consent to exclude',
  starts_at: 'Start',
  ends_at: 'End',
  timezone: 'Time zone',
  windows: 'Calling windows',
  max_concurrency: 'Calls at once',
  max_attempts: 'Attempts per contact',
  retry_on: 'Endings to retry',
  failed_reasons: 'Failures to retry',
  interval_sec: 'Wait between attempts',
};

function labelOf(id: string): string {
  const row = /^w(\d+)_(days|start|end)$/.exec(id);
  if (row)
    return `Window ${Number(row[1]) + 1} ${row[2] === 'days' ? 'days' : row[2] === 'start' ? 'opens' : 'closes'}`;
  return FIELD_LABELS[id] ?? id;
}

// ---- rendering

/** The attributes of a field with problems: marked invalid and described by its message. */
function invalidAttrs(problems: Problems, id: string): SafeHtml | '' {
  return problems.byField.has(id) ? html` aria-invalid="true" aria-describedby="${id}-error"` : '';
}

/** The message shown next to a field with problems. */
function fieldError(problems: Problems, id: string): SafeHtml | '' {
  const messages = problems.byField.get(id);
  return messages ? html`<p class="field-error" id="${id}-error">${outside(messages.join('; '))}</p>` : '';
}

function checkboxes(name: string, options: readonly string[], checked: string[], labels?: readonly string[]) {
  return options.map(
    (option, index) =>
      html`<label
        ><input type="checkbox" name="${name}" value="${option}" ${checked.includes(option) ? html` checked` : ''} />
        ${labels?.[index] ?? option}</label
      >`,
  );
}

/** A group of checkboxes in a fieldset, with its problems after the legend. */
function checkboxGroup(
  problems: Problems,
  id: string,
  legend: HtmlValue,
  boxes: HtmlValue,
  help: HtmlValue = '',
): SafeHtml {
  return html`<fieldset id="${id}" ${invalidAttrs(problems, id)}>
    <legend>${legend}</legend>
    ${fieldError(problems, id)} ${boxes} ${help}
  </fieldset>`;
}

function windowRow(values: FormValues, problems: Problems, index: number): SafeHtml {
  const row = values.windows[index] ?? { days: [], start: '', end: '' };
  const id = `w${index}`;
  return html`<fieldset>
    <legend>Window ${index + 1}${index === 0 ? '' : ' (optional)'}</legend>
    <fieldset id="${id}_days" ${invalidAttrs(problems, `${id}_days`)}>
      <legend>Days</legend>
      ${fieldError(problems, `${id}_days`)} ${checkboxes(`${id}_days`, DAYS, row.days, DAY_LABELS)}
    </fieldset>
    <label for="${id}_start">Opens (HH:MM)</label>
    ${fieldError(problems, `${id}_start`)}
    <input
      type="text"
      id="${id}_start"
      name="${id}_start"
      inputmode="numeric"
      maxlength="5"
      placeholder="09:00"
      value="${row.start}"
      ${invalidAttrs(problems, `${id}_start`)}
    />
    <label for="${id}_end">Closes (HH:MM, 24:00 for the end of the day)</label>
    ${fieldError(problems, `${id}_end`)}
    <input
      type="text"
      id="${id}_end"
      name="${id}_end"
      inputmode="numeric"
      maxlength="5"
      placeholder="18:00"
      value="${row.end}"
      ${invalidAttrs(problems, `${id}_end`)}
    />
  </fieldset>`;
}

function csvReport(lines: CsvLineProblem[]): SafeHtml | '' {
  if (lines.length === 0) return '';
  return tableBox(
    'CSV rows that name no contact',
    html`<table id="csv-report">
      <caption>
        CSV rows that name no contact (nothing was created)
      </caption>
      <thead>
        <tr>
          <th scope="col">Line</th>
          <th scope="col">Why</th>
        </tr>
      </thead>
      <tbody>
        ${lines.map(
          (entry) =>
            html`<tr>
              <td>${entry.line}</td>
              <td>${outside(entry.message)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`,
  );
}

function summary(problems: Problems): HtmlValue {
  const items = [...problems.byField].map(
    ([id, messages]) => html`<li><a href="#${id}">${labelOf(id)}</a>: ${outside(messages.join('; '))}</li>`,
  );
  if (items.length === 0 && !problems.general && problems.csvLines.length === 0) return '';
  return notice(
    'error',
    html`<p><strong>The campaign was not created.</strong> ${problems.general ? outside(problems.general) : ''}</p>
      ${
        items.length
          ? html`<ul>
              ${items}
            </ul>`
          : ''
      }
      ${
        problems.csvLines.length
          ? html`<p>
              <a href="#csv-report"
                >${problems.csvLines.length} CSV ${problems.csvLines.length === 1 ? 'row' : 'rows'} could not be used</a
              >.
            </p>`
          : ''
      }`,
  );
}

function formPage(
  session: DashboardSession,
  agents: Array<{ id: string; name: string }>,
  values: FormValues,
  problems: Problems,
): string {
  const zones = zoneNames([DEFAULT_ZONE, values.timezone]);
  const fresh = values === FRESH;
  const text = (id: string, label: string, value: string, extra: HtmlValue = '') =>
    html`<label for="${id}">${label}</label>
      ${fieldError(problems, id)}
      <input type="text" id="${id}" name="${id}" value="${value}" ${extra} ${invalidAttrs(problems, id)} />`;
  const number = (id: string, label: string, value: string, bounds: SafeHtml) =>
    html`<label for="${id}">${label}</label>
      ${fieldError(problems, id)}
      <input type="number" id="${id}" name="${id}" value="${value}" ${bounds} ${invalidAttrs(problems, id)} />`;
  const body = html`${summary(problems)}
    <form method="post" action="${CURRENT}">
      ${csrfField(session)}${onceField()} ${text('name', 'Name', values.name, html`required maxlength="200"`)}
      <label for="agent_id">Agent</label>
      ${fieldError(problems, 'agent_id')}
      <select id="agent_id" name="agent_id" required ${invalidAttrs(problems, 'agent_id')}>
        ${agents.map(
          (agent) =>
            html`<option value="${agent.id}" ${agent.id === values.agentId ? html` selected` : ''}>
              ${agent.name}
            </option>`,
        )}
      </select>

      <h2>Contacts</h2>
      <fieldset>
        <legend>Choose the contacts</legend>
        <label
          ><input type="radio" name="source" value="filter" ${values.source === 'filter' ? html` checked` : ''} /> By
          consent (below)</label
        >
        <label
          ><input
            type="radio"
            id="source-csv"
            name="source"
            value="csv"
            ${values.source === 'csv' ? html` checked` : ''}
          />
          From a CSV file (below)</label
        >
      </fieldset>
      ${checkboxGroup(
        problems,
        'consent',
        'Contacts by consent',
        checkboxes('consent', CONSENTS, values.consent),
        html`<p class="muted">Contacts whose consent was captured one of these ways; none ticked: every contact.</p>`,
      )}
      <label for="csv">Contacts by CSV</label>
      <p id="csv-help" class="muted">
        A header line, then one contact a row: columns ${CAMPAIGN_CSV_COLUMNS.join(' and/or ')} (a contact's id, or its
        number as stored in Contacts), at most ${MAX_CONTACT_IDS.toLocaleString('en')} rows; for more, choose contacts
        by consent. Rows naming no contact are listed by line and nothing is created.
      </p>
      ${fieldError(problems, 'csv')}
      <div hidden>
        <label for="csv-file">CSV file</label><input type="file" id="csv-file" accept=".csv,text/csv" data-into="csv" />
      </div>
      <textarea
        id="csv"
        name="csv"
        data-selects="source-csv"
        spellcheck="false"
        aria-describedby="csv-help${problems.byField.has('csv') ? ' csv-error' : ''}"
        ${problems.byField.has('csv') ? html` aria-invalid="true"` : ''}
      >
${values.csv}</textarea>
      ${csvReport(problems.csvLines)}
      ${checkboxGroup(
        problems,
        'exclude',
        'Consent to exclude',
        checkboxes('exclude', CONSENTS, values.exclude),
        html`<p class="muted">Contacts with these are skipped, never called.</p>`,
      )}

      <h2>Schedule</h2>
      <label for="timezone">Time zone</label>
      ${fieldError(problems, 'timezone')}
      <select
        id="timezone"
        name="timezone"
        ${fresh ? html` data-local-zone` : ''}
        ${invalidAttrs(problems, 'timezone')}
      >
        ${zones.map(
          (zone) => html`<option value="${zone}" ${zone === values.timezone ? html` selected` : ''}>${zone}</option>`,
        )}
      </select>
      <label for="starts_at">Start (local time in that zone; empty: now)</label>
      ${fieldError(problems, 'starts_at')}
      <input
        type="datetime-local"
        id="starts_at"
        name="starts_at"
        value="${values.startsAt}"
        ${invalidAttrs(problems, 'starts_at')}
      />
      <label for="ends_at">End (optional; contacts not called by then expire)</label>
      ${fieldError(problems, 'ends_at')}
      <input
        type="datetime-local"
        id="ends_at"
        name="ends_at"
        value="${values.endsAt}"
        ${invalidAttrs(problems, 'ends_at')}
      />
      <h3 id="windows">Calling windows</h3>
      <p class="muted">Calls start only inside a window, in the campaign's time zone. Fill one row at least.</p>
      ${fieldError(problems, 'windows')}
      ${Array.from({ length: WINDOW_ROWS }, (_, index) => windowRow(values, problems, index))}

      <h2>Pace and retries</h2>
      ${number('max_concurrency', 'Calls at once, at most', values.maxConcurrency, html`min="1" max="1000"`)}
      ${number('max_attempts', 'Attempts per contact, at most (the first included)', values.maxAttempts, html`min="1" max="5"`)}
      ${checkboxGroup(problems, 'retry_on', 'Endings to retry', checkboxes('retry_on', ENDINGS, values.retryOn))}
      ${checkboxGroup(
        problems,
        'failed_reasons',
        'Failures to retry (with failed ticked above)',
        checkboxes('failed_reasons', FAILURES, values.failedReasons),
        html`<p class="muted">None ticked: both.</p>`,
      )}
      ${number('interval_sec', 'Wait between attempts (seconds)', values.intervalSec, html`min="60" max="604800"`)}
      <p><button type="submit">Create campaign</button> <a href="${CAMPAIGNS}">Back to the campaigns</a></p>
    </form>`;
  return page({ title: 'New campaign', session, current: CAMPAIGNS, body });
}

// ---- reading and checking

function valuesOf(ctx: Koa.Context): FormValues {
  return {
    name: field(ctx, 'name'),
    agentId: field(ctx, 'agent_id'),
    source: field(ctx, 'source') === 'csv' ? 'csv' : 'filter',
    consent: fields(ctx, 'consent'),
    csv: field(ctx, 'csv'),
    exclude: fields(ctx, 'exclude'),
    startsAt: field(ctx, 'starts_at').trim(),
    endsAt: field(ctx, 'ends_at').trim(),
    timezone: field(ctx, 'timezone').trim(),
    windows: Array.from({ length: WINDOW_ROWS }, (_, index) => ({
      days: fields(ctx, `w${index}_days`),
      start: field(ctx, `w${index}_start`).trim(),
      end: field(ctx, `w${index}_end`).trim(),
    })),
    maxConcurrency: field(ctx, 'max_concurrency').trim(),
    maxAttempts: field(ctx, 'max_attempts').trim(),
    retryOn: fields(ctx, 'retry_on'),
    failedReasons: fields(ctx, 'failed_reasons'),
    intervalSec: field(ctx, 'interval_sec').trim(),
  };
}

/** A whole number field as a number, anything else as sent (the schema then says what it must be). */
function whole(text: string): number | string {
  return /^\d{1,9}$/.test(text) ? Number(text) : text;
}

/** The request body the form asks for, with the form row of each window sent (the body's windows skip empty rows). */
function bodyOf(values: FormValues, contacts: Schemas['CampaignContacts']): { body: unknown; rows: number[] } {
  const rows = values.windows.flatMap((row, index) =>
    row.days.length > 0 || row.start !== '' || row.end !== '' ? [index] : [],
  );
  const zoneKnown = isKnownTimeZone(values.timezone);
  // A local time that cannot be read is sent as typed, for the schema to refuse it in its words.
  const instant = (local: string) =>
    zoneKnown ? (instantOfLocal(local, values.timezone)?.toISOString() ?? local) : local;
  const retry: Record<string, unknown> = {
    max_attempts: whole(values.maxAttempts),
    on: values.retryOn,
    interval_sec: whole(values.intervalSec),
  };
  if (values.failedReasons.length > 0) retry.failed_reasons = values.failedReasons;
  const body = {
    name: values.name,
    agent_id: values.agentId,
    contacts,
    exclude_consent_capture: values.exclude,
    schedule: {
      ...(values.startsAt ? { starts_at: instant(values.startsAt) } : {}),
      ...(values.endsAt ? { ends_at: instant(values.endsAt) } : {}),
      timezone: values.timezone,
      windows: rows.map((index) => values.windows[index]),
    },
    max_concurrency: whole(values.maxConcurrency),
    retry,
  };
  return { body, rows };
}

/**
 * The id of the form field an API param is about (`schedule.windows.1.start` → the row's opening time),
 * or null for one the form has no field for.
 */
function fieldOf(param: string, rows: number[], source: FormValues['source']): string | null {
  const window = /^schedule\.windows\.(\d+)(?:\.(days|start|end))?/.exec(param);
  if (window) return `w${rows[Number(window[1])] ?? 0}_${window[2] ?? 'days'}`;
  const prefixes: Array<[string, string]> = [
    ['name', 'name'],
    ['agent_id', 'agent_id'],
    ['contacts.contact_ids', 'csv'],
    ['contacts', source === 'csv' ? 'csv' : 'consent'],
    ['exclude_consent_capture', 'exclude'],
    ['schedule.starts_at', 'starts_at'],
    ['schedule.ends_at', 'ends_at'],
    ['schedule.timezone', 'timezone'],
    ['schedule', 'windows'],
    ['max_concurrency', 'max_concurrency'],
    ['retry.max_attempts', 'max_attempts'],
    ['retry.failed_reasons', 'failed_reasons'],
    ['retry.interval_sec', 'interval_sec'],
    ['retry', 'retry_on'],
  ];
  return prefixes.find(([prefix]) => param === prefix || param.startsWith(`${prefix}.`))?.[1] ?? null;
}

/** Notes `message` next to the field `id`, or above the form (naming `param`) when no field is about it. */
function addProblem(problems: Problems, id: string | null, message: string, param = ''): void {
  if (id === null) {
    problems.general = `${param}: ${message}`;
    return;
  }
  const list = problems.byField.get(id) ?? problems.byField.set(id, []).get(id)!;
  if (!list.includes(message)) list.push(message);
}

/** The org's agents for the picker (agents are the live org's and serve both modes). */
async function agentsOf(env: DashboardEnv, session: DashboardSession) {
  return (await listAgents(env.deps.db, session.orgId)).map((agent) => ({ id: agent.id, name: agent.name }));
}

const NO_PROBLEMS: Problems = { byField: new Map(), csvLines: [], general: null };

/** GET: the empty form. */
async function showForm(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const agents = await agentsOf(env, session);
  if (agents.length === 0) {
    const body = notice('info', 'This organisation has no agents yet; an operator adds them. A campaign needs one.');
    sendPage(ctx, 200, page({ title: 'New campaign', session, current: CAMPAIGNS, body }));
    return;
  }
  sendPage(ctx, 200, formPage(session, agents, FRESH, NO_PROBLEMS));
}

/** POST: creates the campaign and opens its page; a refused form comes back with what to put right. */
async function create(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const { db, clock } = env.deps;
  const values = valuesOf(ctx);
  const problems: Problems = { byField: new Map(), csvLines: [], general: null };
  let contacts: Schemas['CampaignContacts'] = {
    filter: values.consent.length ? { consent_capture: values.consent as Schemas['ConsentCapture'][] } : {},
  };
  if (values.source === 'filter' && values.csv.trim() !== '') {
    // Calling by consent would drop the rows the user gave, and call far more people than they listed.
    addProblem(
      problems,
      'csv',
      'holds contacts while "By consent" is chosen: choose "From a CSV file" to call them, or empty this box',
    );
  }
  if (values.source === 'csv') {
    try {
      const { contactIds, problems: lines } = await contactsOfCsv(db, session.modeOrgId, values.csv);
      problems.csvLines = lines;
      if (contactIds.length) contacts = { contact_ids: contactIds };
    } catch (error) {
      if (!(error instanceof DomainError) || error.code !== 'invalid_request') throw error;
      addProblem(problems, 'csv', error.details?.csv?.[0] ?? error.message);
    }
  }
  const csvRefused = values.source === 'csv' && !('contact_ids' in contacts);
  const { body, rows } = bodyOf(values, contacts);
  const schemaProblems = campaignCreateProblems(body);
  if (schemaProblems.length > 0) {
    for (const [param, messages] of messagesByField(schemaProblems, { data: body })) {
      const id = fieldOf(param, rows, values.source);
      // A CSV already refused stood in for by a filter: its own report says what is wrong.
      if (csvRefused && (id === 'csv' || id === 'consent')) continue;
      for (const message of messages) addProblem(problems, id, message, param);
    }
  }
  let status = 400;
  if (problems.byField.size === 0 && problems.csvLines.length === 0 && !problems.general) {
    try {
      const { campaign } = await createCampaign(
        db,
        {
          auth: { orgId: session.modeOrgId, accountOrgId: session.orgId },
          body: body as Schemas['CampaignCreate'],
          idempotencyKey: undefined,
          now: clock.now(),
        },
        (id) => ({ ...auditedBy(ctx, session), action: 'campaign.created', target: id }),
      );
      await wakeCampaign(env.deps, campaign.id);
      redirectAfterPost(ctx, doneLocation(campaignPath(campaign.id), session, 'created'));
      return;
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (error.code === 'forbidden') {
        problems.general = error.message;
        status = 403;
      } else if (error.code === 'invalid_request' || error.code === 'not_found') {
        const param = error.param ?? '';
        const message = error.details?.[param]?.[0] ?? error.message.replace(`${param}: `, '');
        addProblem(problems, fieldOf(param, rows, values.source), message, param);
      } else throw error;
    }
  }
  sendPage(ctx, status, formPage(session, await agentsOf(env, session), values, problems));
}

/** Registers the form that creates a campaign (before the campaign pages, whose `:id` would take `new`). */
export function campaignFormRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showForm, { adminOnly: true }));
  // One-time, so a second click or a reload does not create (and audit) a second campaign.
  router.post(CURRENT, formBody, action(env, create, { once: true }));
}
