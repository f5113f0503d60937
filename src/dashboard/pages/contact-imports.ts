// A CSV import's page: its progress while it runs, its per-row report when done, and when it failed,
// what was stored and how to finish safely. The contacts page sends the browser here when an import
// takes longer than the form waits.
import type Router from '@koa/router';
import type Koa from 'koa';
import type { DashboardSession } from '../mode.js';
import type { ImportSummary } from '../../contacts/csv-import.js';
import { getContactImport } from '../../contacts/service.js';
import type { RowError } from '../../contacts/csv-rows.js';
import { html, type SafeHtml } from '../html.js';
import { notice, page, tableBox } from '../layout.js';
import { outside } from '../outside-text.js';
import { minute } from '../format.js';
import { sendPage, uuidParam, view, pathParam, type DashboardEnv } from '../route-steps.js';

/** The path of an import's page. */
export function importPath(id: string): string {
  return `/dashboard/contacts/imports/${id}`;
}

function rejectedRows(rejections: Array<{ line: number; error: RowError }>): SafeHtml | string {
  if (rejections.length === 0) return '';
  return tableBox(
    'Rejected rows',
    html`<table>
      <caption>
        Rejected rows
      </caption>
      <thead>
        <tr>
          <th scope="col">Line</th>
          <th scope="col">Field</th>
          <th scope="col">Why</th>
        </tr>
      </thead>
      <tbody>
        ${rejections.map(
          (entry) =>
            html`<tr>
              <td>${entry.line}</td>
              <td>${entry.error.param ? outside(entry.error.param) : '—'}</td>
              <td>${outside(entry.error.message)}</td>
            </tr>`,
        )}
      </tbody>
    </table>`,
  );
}

/** The report of a finished import: its counts and its rejected rows by line. */
export function importReport(summary: ImportSummary): SafeHtml {
  return notice(
    'info',
    html`<p>
        <strong>Import done:</strong> ${summary.rows} rows read, ${summary.created} created, ${summary.updated} updated,
        ${summary.rejected} rejected.
      </p>
      ${rejectedRows(summary.rejections)}`,
  );
}

/** GET: an import's progress, report or failure. */
async function showImport(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  const found = await getContactImport(
    env.deps.db,
    session.modeOrgId,
    uuidParam(pathParam(ctx, 'id'), 'contact import'),
  );
  const rejections = found.rejections as Array<{ line: number; error: RowError }>;
  const stored = html`The first ${found.rows_committed} rows (through line ${found.last_line_committed}) were read:
  ${found.created} contacts created and ${found.updated} updated, each new one with its contact.created event;
  ${found.rejected} rows were rejected.`;
  let body: SafeHtml;
  if (found.status === 'done') {
    body = importReport({
      rows: found.rows_committed,
      created: found.created,
      updated: found.updated,
      rejected: found.rejected,
      rejections,
    });
  } else if (found.status === 'running') {
    body = notice(
      'info',
      html`<p><strong>Import running</strong> since ${minute(found.started_at)}. ${stored}</p>
        <p><a href="${importPath(found.id)}">Check again</a> (this page does not refresh itself).</p>`,
    );
  } else {
    body = html`${notice(
      'error',
      html`<p><strong>Import failed:</strong> ${found.reason ? outside(found.reason) : 'no reason was recorded'}.</p>
        <p>${stored} The rows after line ${found.last_line_committed} were not imported.</p>
        <p>
          To finish, import the same file again: numbers already stored are matched by phone number and counted as
          updated, so no contact is created, or announced by contact.created, twice.
        </p>`,
    )}
    ${rejectedRows(rejections)}`;
  }
  const back = html`<p><a href="/dashboard/contacts">Back to the contacts</a></p>`;
  sendPage(ctx, 200, page({ title: 'Contact import', session, current: '/dashboard/contacts', body: [body, back] }));
}

/** Registers the import's page. */
export function contactImportRoutes(router: Router, env: DashboardEnv): void {
  router.get('/dashboard/contacts/imports/:id', view(env, showImport));
}
