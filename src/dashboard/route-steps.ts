// How dashboard routes run: headers on every answer, the session looked up in the mode its test-mode
// switch is on (sign-in page otherwise), viewers kept to reading, state changes checked for origin and
// CSRF token, and the services' domain errors shown as pages with their status.
import type Koa from 'koa';
import { bodyParser } from '@koa/bodyparser';
import type { AppDeps } from '../app-deps.js';
import { DomainError, notFound } from '../errors.js';
import { html } from './html.js';
import { outside } from './outside-text.js';
import { notice, page } from './layout.js';
import { readSessionCookie } from './cookies.js';
import { csrfMatches, isSameOrigin, setPageHeaders } from './security.js';
import { loadSession, type SessionLifetimes } from '../members/sessions.js';
import { inMode, readMode, type DashboardSession } from './mode.js';
import type { HashPool } from '../members/hash-pool.js';
import { claimFormNonce, isFormNonce, releaseFormNonce } from '../members/form-nonces.js';
import { MAX_CSV_BYTES } from './policy.js';
import { findUnstorableValue } from '../contract/text-rules.js';

/** What the dashboard's routes need: the app's dependencies and its session settings. */
export interface DashboardEnv {
  deps: AppDeps;
  lifetimes: SessionLifetimes;
  /** Whether cookies are marked Secure (PUBLIC_BASE_URL is https). */
  secureCookies: boolean;
  /** The process's bounded pool of sign-in password hashes. */
  hashes: HashPool;
}

/** A page's work, once its checks have passed (a route's handler, named after what it does). */
export type PageHandler = (ctx: Koa.Context, session: DashboardSession, env: DashboardEnv) => Promise<void>;

const STATUS_OF: Partial<Record<DomainError['code'], number>> = {
  invalid_request: 400,
  forbidden: 403,
  not_found: 404,
  invalid_state: 409,
  too_many_requests: 429,
};

/** The heading of the page explaining each status. */
export const TITLE_OF: Record<number, string> = {
  400: 'That did not work',
  413: 'Too large',
  415: 'That did not work',
  403: 'Not allowed',
  404: 'Not found',
  409: 'Not possible now',
  429: 'Too many requests',
  500: 'Something went wrong',
  503: 'Not available right now',
};

/** Answers with a whole page. */
export function sendPage(ctx: Koa.Context, status: number, body: string): void {
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

/** Answers with a short page explaining why the request was not done. */
export function sendProblem(ctx: Koa.Context, session: DashboardSession | null, status: number, message: string): void {
  // Never a dead end: signed out, the link leads to the sign-in page.
  const back = html`<p><a href="/dashboard">${session ? 'Back to the overview' : 'Back to the dashboard'}</a></p>`;
  sendPage(
    ctx,
    status,
    page({ title: TITLE_OF[status] ?? 'Error', session, body: [notice('error', outside(message)), back] }),
  );
}

/** Sends the browser to `location` after a change (303: the next request is a GET). */
export function redirectAfterPost(ctx: Koa.Context, location: string): void {
  ctx.status = 303;
  ctx.redirect(location);
}

/** Runs a page's handler, answering its domain errors with a problem page; resolves whether it did. */
async function runHandler(
  env: DashboardEnv,
  ctx: Koa.Context,
  session: DashboardSession,
  handler: PageHandler,
): Promise<boolean> {
  try {
    await handler(ctx, session, env);
    return false;
  } catch (error) {
    const status = error instanceof DomainError ? STATUS_OF[error.code] : undefined;
    if (status === undefined) throw error;
    if (error instanceof DomainError && error.headers['Retry-After'])
      ctx.set('Retry-After', error.headers['Retry-After']);
    sendProblem(ctx, session, status, (error as DomainError).message);
    return true;
  }
}

/** The session each request was found signed in with, for a fault page drawn after its handler failed. */
const sessionOfRequest = new WeakMap<Koa.Context, DashboardSession>();

/** The signed-in session of the request, in the mode its switch is on, or null. */
export async function currentSession(env: DashboardEnv, ctx: Koa.Context): Promise<DashboardSession | null> {
  const token = readSessionCookie(ctx);
  const session = token ? await loadSession(env.deps.db, token, env.lifetimes, env.deps.clock.now()) : null;
  if (!session) return null;
  const current = await inMode(env.deps.db, session, readMode(ctx));
  sessionOfRequest.set(ctx, current);
  return current;
}

/**
 * The session currentSession found for this request, or null when it found none or was never reached
 * or failed; reads nothing, so a page explaining a fault can use it whatever the database does.
 */
export function sessionFoundFor(ctx: Koa.Context): DashboardSession | null {
  return sessionOfRequest.get(ctx) ?? null;
}

/** What the sign-in page says to someone whose session ended: on opening a page, or on sending a form. */
export const SIGN_IN_REASONS = {
  session: 'Your session has ended. Sign in again to go on.',
  form: 'Your session ended before the form was sent, so nothing was changed. Sign in to go back to the page, then send it again.',
} as const;

/** Why the sign-in page is shown (see SIGN_IN_REASONS). */
export type SignInReason = keyof typeof SIGN_IN_REASONS;

/**
 * The sign-in page, with the page to return to once signed in (a dashboard page of this site only) and,
 * when a session cookie came without a live session, why the page is shown (see SIGN_IN_REASONS).
 */
function signInLocation(returnTo: string, ended?: SignInReason): string {
  const query = new URLSearchParams();
  if (returnTo !== '/dashboard') query.set('next', returnTo);
  if (ended) query.set('ended', ended);
  return query.size === 0 ? '/dashboard/login' : `/dashboard/login?${query.toString()}`;
}

/** The dashboard page a form was sent from (its Referer, which the dashboard keeps to its own origin), else the overview. */
function formPage(ctx: Koa.Context): string {
  try {
    const referer = new URL(ctx.get('Referer'));
    return returnPath(`${referer.pathname}${referer.search}`);
  } catch {
    return '/dashboard';
  }
}

/**
 * `next` when it names a page of the dashboard (not another site, no `.` or `..` segment, not the
 * sign-in, sign-out or link pages), else the overview.
 */
export function returnPath(next: unknown): string {
  if (typeof next !== 'string' || !/^\/dashboard(\/[A-Za-z0-9._~%!$&'()*+,;=:@/?-]*)?$/.test(next)) return '/dashboard';
  const path = next.split('?')[0]!;
  if (path.includes('//') || /\/(\.|%2e){1,2}(\/|$)/i.test(path)) return '/dashboard';
  if (/^\/dashboard\/(login|logout|invite)\b/i.test(path)) return '/dashboard';
  return next;
}

/** A page that reads: signed in (else to the sign-in page), admins only when `adminOnly`. */
export function view(env: DashboardEnv, handler: PageHandler, options: { adminOnly?: boolean } = {}): Koa.Middleware {
  return async (ctx) => {
    setPageHeaders(ctx);
    const session = await currentSession(env, ctx);
    if (!session) {
      ctx.redirect(signInLocation(returnPath(ctx.originalUrl), readSessionCookie(ctx) ? 'session' : undefined));
      return;
    }
    if (options.adminOnly && session.role !== 'admin') {
      sendProblem(ctx, session, 403, 'Only admins of the organisation can see this page.');
      return;
    }
    await runHandler(env, ctx, session, handler);
  };
}

const parseForm = bodyParser({ enableTypes: ['form'], formLimit: MAX_CSV_BYTES * 3 }) as Koa.Middleware;

/**
 * Reads a urlencoded form body (the only kind the dashboard's forms send); a body too large or
 * unreadable, or holding text the database cannot store (U+0000, an unpaired surrogate), gets a page
 * with its status (413, 400) and goes no further.
 */
export const formBody: Koa.Middleware = async (ctx, next) => {
  try {
    await parseForm(ctx, () => Promise.resolve());
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    if (status !== 413 && status !== 400 && status !== 415) throw error;
    setPageHeaders(ctx);
    sendProblem(
      ctx,
      null,
      status,
      status === 413
        ? 'The form was too large; nothing was changed.'
        : 'The form could not be read; nothing was changed.',
    );
    return;
  }
  const unstorable = findUnstorableValue(ctx.request.body);
  if (unstorable) {
    setPageHeaders(ctx);
    sendProblem(ctx, null, 400, `The form's ${unstorable.path} ${unstorable.problem}; nothing was changed.`);
    return;
  }
  await next();
};

/** The form's value of `name` as text ('' when absent or not text). */
export function field(ctx: Koa.Context, name: string): string {
  const body = ctx.request.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  return typeof value === 'string' ? value : '';
}

/** The form's values of `name` (a checkbox group), as text. */
export function fields(ctx: Koa.Context, name: string): string[] {
  const body = ctx.request.body as Record<string, unknown> | undefined;
  const value = body?.[name];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

/**
 * Runs a one-time form's handler (see onceField): its nonce is claimed first, and a form sent again
 * gets a 409 page instead of a second change. A change the service refused (a problem page, or the
 * form shown again with its error: bad input, a conflict) gives the nonce back, so the same form may be
 * sent again; after any other failure the change may have been made, so the nonce stays used.
 */
async function runOnce(
  env: DashboardEnv,
  ctx: Koa.Context,
  session: DashboardSession,
  handler: PageHandler,
): Promise<void> {
  const nonce = field(ctx, '_once');
  if (!isFormNonce(nonce)) {
    sendProblem(ctx, session, 400, 'This form is incomplete; reload the page and try again. Nothing was changed.');
    return;
  }
  const { db, clock } = env.deps;
  const claim = await claimFormNonce(db, session.idHash, nonce, clock.now());
  if (claim === 'no_session') {
    // Signed out (in another tab, or by a reset or removal) since the request began.
    redirectAfterPost(ctx, signInLocation(formPage(ctx), 'form'));
    return;
  }
  if (claim === 'used') {
    sendProblem(
      ctx,
      session,
      409,
      'This form was already sent, so it was not done again, and what it showed once is not shown again. ' +
        'Open the page again for a new form.',
    );
    return;
  }
  const refused = await runHandler(env, ctx, session, handler);
  // A handler that answers a 4xx itself (the form again, with its error) made no change either.
  if (refused || (ctx.status >= 400 && ctx.status < 500)) await releaseFormNonce(db, session.idHash, nonce);
}

/**
 * A form post that changes something: refused with 403 unless it comes from this origin with the
 * session's CSRF token, and, unless `anyRole`, from an admin. Without a session: to the sign-in page.
 * A `once` form (one showing a secret once) is done once per nonce (see runOnce).
 */
export function action(
  env: DashboardEnv,
  handler: PageHandler,
  options: { anyRole?: boolean; once?: boolean } = {},
): Koa.Middleware {
  return async (ctx) => {
    setPageHeaders(ctx);
    const session = await currentSession(env, ctx);
    if (!isSameOrigin(ctx, env.deps.config.publicBaseUrl)) {
      sendProblem(ctx, session, 403, 'This request came from another site and was refused; nothing was changed.');
      return;
    }
    if (!session) {
      redirectAfterPost(ctx, signInLocation(formPage(ctx), 'form'));
      return;
    }
    if (!csrfMatches(session.csrfToken, field(ctx, '_csrf'))) {
      sendProblem(ctx, session, 403, 'This form has expired or was not sent from this dashboard; nothing was changed.');
      return;
    }
    if (!options.anyRole && session.role !== 'admin') {
      sendProblem(ctx, session, 403, 'Viewers can read but not change anything; ask an admin.');
      return;
    }
    await (options.once ? runOnce(env, ctx, session, handler) : runHandler(env, ctx, session, handler));
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The path parameter `name` the route matched (Koa types ctx.params as any). */
export function pathParam(ctx: Koa.Context, name: string): string | undefined {
  return (ctx.params as Record<string, string | undefined>)[name];
}

/** A path's id, which must be a UUID; throws not_found otherwise (as for an id of another org). */
export function uuidParam(value: string | undefined, resource: string): string {
  if (!value || !UUID.test(value)) throw notFound(resource);
  return value;
}
