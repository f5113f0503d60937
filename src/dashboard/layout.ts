// The page shell: document head (this server's style sheet and script only), the navigation and who
// is signed in, around a page's content.
import { html, type HtmlValue, type SafeHtml } from './html.js';
import type { DashboardSession } from './mode.js';
import { newFormNonce } from '../members/form-nonces.js';
import { outside } from './outside-text.js';

/** The sections in the navigation, in order; `admin` ones are listed for admins only. */
const SECTIONS: Array<{ href: string; label: string; admin?: boolean }> = [
  { href: '/dashboard', label: 'Overview' },
  { href: '/dashboard/keys', label: 'API keys' },
  { href: '/dashboard/webhooks', label: 'Webhooks' },
  { href: '/dashboard/calls', label: 'Calls' },
  { href: '/dashboard/contacts', label: 'Contacts' },
  { href: '/dashboard/campaigns', label: 'Campaigns' },
  { href: '/dashboard/suppressions', label: 'Do-not-call list' },
  { href: '/dashboard/members', label: 'Members' },
  { href: '/dashboard/audit', label: 'Audit log', admin: true },
];

/** The hidden field carrying the session's CSRF token; every form that changes something includes it. */
export function csrfField(session: DashboardSession): SafeHtml {
  return html`<input type="hidden" name="_csrf" value="${session.csrfToken}" />`;
}

/**
 * The hidden field of a one-time form (one that shows a secret once): a fresh nonce, which the
 * server accepts once, so a reload or a second click does not repeat the change.
 */
export function onceField(): SafeHtml {
  return html`<input type="hidden" name="_once" value="${newFormNonce()}" />`;
}

/**
 * The test-mode switch: a toggle button posting the other mode, then back to the section shown (its
 * list page, since a record of one mode is not found in the other).
 */
function modeSwitch(session: DashboardSession, current: string | undefined): SafeHtml {
  const test = session.mode === 'test';
  return html`<form class="inline" method="post" action="/dashboard/mode">
    ${csrfField(session)}<input type="hidden" name="next" value="${current ?? '/dashboard'}" />
    <button
      type="submit"
      class="mode-switch"
      name="mode"
      value="${test ? 'live' : 'test'}"
      aria-pressed="${String(test)}"
    >
      Test mode <span class="mode-state" aria-hidden="true">${test ? 'on' : 'off'}</span>
    </button>
  </form>`;
}

/** The banner shown on every page while the switch is on, so test data is never taken for live data. */
function testModeBanner(): SafeHtml {
  return html`<section class="test-banner" aria-label="Test mode">
    <p>
      <strong>Test mode: you are viewing test data.</strong> Keys, webhooks, calls, contacts, campaigns, the do-not-call
      list and credits here are apart from live data; test calls only reach the simulator.
    </p>
  </section>`;
}

function navigation(session: DashboardSession, current: string | undefined): SafeHtml {
  const items = SECTIONS.filter((section) => !section.admin || session.role === 'admin').map(
    (section) =>
      html`<li>
        <a href="${section.href}" ${section.href === current ? html` aria-current="page"` : ''}>${section.label}</a>
      </li>`,
  );
  return html`<header>
    <nav aria-label="Dashboard">
      <ul>
        ${items}
      </ul>
    </nav>
    <div class="who">
      <span>${outside(session.orgName)} · ${outside(session.email)} (${session.role})</span>
      ${modeSwitch(session, current)}
      <form class="inline" method="post" action="/dashboard/logout">
        ${csrfField(session)}<button type="submit" class="secondary">Sign out</button>
      </form>
    </div>
  </header>`;
}

/**
 * A whole page: `title` in the tab and as its heading (unless `heading` is given, as for a record shown
 * by its own name), the navigation when signed in, then `body`; in test mode the tab's title says so
 * and a banner heads the page.
 */
export function page(options: {
  title: string;
  heading?: HtmlValue;
  session: DashboardSession | null;
  current?: string;
  body: HtmlValue;
}): string {
  const { title, heading = title, session, current, body } = options;
  const test = session?.mode === 'test';
  return html`<!doctype html>
    <html lang="en" ${test ? html` class="test-mode"` : ''}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>${title}${test ? ' · Test mode' : ''} · Dashboard</title>
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/dashboard/assets/dashboard.css" />
        <script src="/dashboard/assets/dashboard.js" defer></script>
      </head>
      <body>
        <a class="skip" href="#content">Skip to content</a>
        ${test ? testModeBanner() : ''} ${session ? navigation(session, current) : ''}
        <main id="content" tabindex="-1">
          <h1>${heading}</h1>
          ${body}
        </main>
      </body>
    </html> `.text;
}

/** What a confirmation page asks, and where its answer goes. */
export interface Confirmation {
  title: string;
  session: DashboardSession;
  current: string;
  /** The question, naming what the action changes. */
  question: HtmlValue;
  /** Where the form posts when confirmed. */
  action: string;
  /** The label of the button that confirms. */
  button: string;
  /** Where the way back leads. */
  cancel: string;
  /** The way back's words, when "Cancel" would read as the action itself (default "Cancel"). */
  cancelLabel?: string;
  /** Whether the form is a one-time form (see onceField). */
  once?: boolean;
}

/** A page asking the user to confirm a destructive action, with a form that posts to it and a way back. */
export function confirmationPage(options: Confirmation): string {
  const { title, session, current, question, action, button, cancel, cancelLabel = 'Cancel', once } = options;
  const body = html`<p>${question}</p>
    <form method="post" action="${action}">
      ${csrfField(session)}${once ? onceField() : ''} <button type="submit" class="danger">${button}</button>
      <a href="${cancel}">${cancelLabel}</a>
    </form>`;
  return page({ title, session, current, body });
}

/** A boxed message: information, an error, or a secret shown once. */
export function notice(kind: 'info' | 'error' | 'secret', content: HtmlValue): SafeHtml {
  const role = kind === 'error' ? html` role="alert"` : kind === 'info' ? html` role="status"` : '';
  return html`<div class="notice ${kind}" ${role}>${content}</div>`;
}

/**
 * A table in a box of its own that scrolls sideways when the table is wider than the screen, so the
 * page itself never does; the box is named `label` and takes the keyboard focus, so it can be
 * scrolled without a mouse.
 */
export function tableBox(label: string, table: SafeHtml): SafeHtml {
  return html`<div class="table-box" role="region" aria-label="${label}" tabindex="0">${table}</div>`;
}
