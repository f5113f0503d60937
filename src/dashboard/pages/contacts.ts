// Contacts: the org's contacts of the mode shown, filtered by consent, a page at a time, and a CSV
// import into that mode (through the same import as the CLI) that runs in the background: a short one
// answers with its per-row report, a longer one sends the browser to its own page.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Router from '@koa/router';
import { startBackgroundImport } from '../../contacts/background-import.js';
import type { ImportSummary } from '../../contacts/csv-import.js';
import { ImportFileError, IMPORT_COLUMNS } from '../../contacts/csv-rows.js';
import { IMPORT_WAIT_IN_REQUEST_MS } from '../../contacts/policy.js';
import { browseContacts } from '../../contacts/service.js';
import type { Contact } from '../../contacts/mapper.js';
import { invalidField } from '../../errors.js';
import { action, field, formBody, redirectAfterPost, sendPage, view, type DashboardEnv } from '../route-steps.js';
import { importPath, importReport } from './contact-imports.js';
import { html, type HtmlValue, type SafeHtml } from '../html.js';
import { outside, outsideBlock } from '../outside-text.js';
import { csrfField, notice, page, tableBox } from '../layout.js';
import { minute } from '../format.js';
import { MAX_CSV_BYTES } from '../policy.js';
import { livemodeOf, type DashboardSession } from '../mode.js';
import { chosen, pageOf, pager, selectFilter } from './paging.js';
import type Koa from 'koa';

const CURRENT = '/dashboard/contacts';
const CONSENTS = ['pre_call', 'website_form', 'manual', 'imported'] as const satisfies ReadonlyArray<
  NonNullable<Contact['consent_capture']>
>;

function importForm(session: DashboardSession, csv: string): SafeHtml {
  return html`<h2>Import contacts from a CSV file</h2>
    <p class="muted">Columns: ${IMPORT_COLUMNS.join(', ')} (a header line first; phone_e164 is required).</p>
    <form method="post" action="${CURRENT}/import">
      ${csrfField(session)}
      <div hidden>
        <label for="csv-file">CSV file</label><input type="file" id="csv-file" accept=".csv,text/csv" data-into="csv" />
      </div>
      <label for="csv">CSV contents</label>
      <textarea id="csv" name="csv" required spellcheck="false">${csv}</textarea>
      <button type="submit">Import contacts</button>
    </form>`;
}

async function contactsPage(
  env: DashboardEnv,
  ctx: Koa.Context,
  session: DashboardSession,
  shown: HtmlValue,
  csv = '',
): Promise<string> {
  const consent = chosen(ctx, 'consent', CONSENTS);
  const { page: number, limit, offset } = pageOf(ctx);
  const { items, more } = await browseContacts(env.deps.db, session.modeOrgId, {
    limit,
    offset,
    ...(consent ? { consent } : {}),
  });
  const rows = items.map(
    (contact) =>
      html`<tr>
        <td>${contact.name ? outside(contact.name) : '—'}</td>
        <td>${outside(contact.phone_e164)}</td>
        <td>${contact.email ? outside(contact.email) : '—'}</td>
        <td>${contact.language_pref ? outside(contact.language_pref) : '—'}</td>
        <td>${contact.consent_capture ?? '—'}</td>
        <td>${contact.metadata ? outsideBlock(JSON.stringify(contact.metadata)) : ''}</td>
        <td class="when">${minute(contact.updated_at)}</td>
      </tr>`,
  );
  const body = html`${shown} ${selectFilter(CURRENT, 'consent', 'Consent', CONSENTS, consent)}
  ${
    items.length
      ? tableBox(
          'Contacts',
          html`<table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Phone</th>
                <th scope="col">Email</th>
                <th scope="col">Language</th>
                <th scope="col">Consent</th>
                <th scope="col">Metadata</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              ${rows}
            </tbody>
          </table>`,
        )
      : html`<p>No contacts${consent ? ` with consent ${consent}` : ''}.</p>`
  }
  ${pager(CURRENT, { consent }, number, { more, shown: items.length })}
  ${session.role === 'admin' ? importForm(session, csv) : ''}`;
  return page({ title: 'Contacts', session, current: CURRENT, body });
}

/** Resolves with the import's summary if it ends within `ms`, else (still running, or failed) with null. */
async function endedWithin(done: Promise<ImportSummary>, ms: number): Promise<ImportSummary | null> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)));
  try {
    return await Promise.race([done.catch(() => null), waited]);
  } finally {
    clearTimeout(timer);
  }
}

/** POST: imports the pasted CSV in the background; a short import answers with its report. */
async function importCsv(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const csv = field(ctx, 'csv');
  if (Buffer.byteLength(csv) > MAX_CSV_BYTES) {
    throw invalidField('csv', `must be at most ${MAX_CSV_BYTES / 1024 / 1024} MB; import bigger files with the CLI`);
  }
  // The text goes to a private temporary file (the import reads a file, checking its encoding line
  // by line), removed once the import ends.
  const dir = await mkdtemp(path.join(tmpdir(), 'dashboard-import-'));
  const file = path.join(dir, 'contacts.csv');
  await writeFile(file, csv, { mode: 0o600 }).catch(async (error: unknown) => {
    await rm(dir, { recursive: true, force: true });
    throw error;
  });
  let started;
  try {
    started = await startBackgroundImport(env.deps, session.modeOrgId, file, {
      audit: (importId) => ({
        orgId: session.orgId,
        livemode: livemodeOf(session),
        actor: session.email,
        address: ctx.ip,
        action: 'contacts.imported',
        target: `CSV import ${importId}`,
      }),
      cleanup: () => rm(dir, { recursive: true, force: true }),
    });
  } catch (error) {
    if (!(error instanceof ImportFileError)) throw error;
    sendPage(
      ctx,
      400,
      // The text comes back in the form, to be put right rather than pasted again.
      await contactsPage(
        env,
        ctx,
        session,
        notice('error', html`The file was not imported: ${outside(error.message)}`),
        csv,
      ),
    );
    return;
  }
  // A short import answers with its report; a longer one (or a failed one) has its own page.
  const wait = Math.min(IMPORT_WAIT_IN_REQUEST_MS, env.deps.config.requestTimeoutMs / 2);
  const summary = await endedWithin(started.done, wait);
  if (summary) sendPage(ctx, 200, await contactsPage(env, ctx, session, importReport(summary)));
  else redirectAfterPost(ctx, importPath(started.id));
}

/** GET: the org's contacts, filtered by consent, a page at a time, and the import form. */
async function showContacts(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  sendPage(ctx, 200, await contactsPage(env, ctx, session, null));
}

/** Registers the contacts page and its import. */
export function contactRoutes(router: Router, env: DashboardEnv): void {
  router.get(CURRENT, view(env, showContacts));
  router.post(`${CURRENT}/import`, formBody, action(env, importCsv));
}
