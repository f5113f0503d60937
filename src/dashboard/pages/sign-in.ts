// Signing in and out, and setting a password from a one-time invite or reset link.
import type Router from '@koa/router';
import type Koa from 'koa';
import { DomainError } from '../../errors.js';
import { outside } from '../outside-text.js';
import { clearSessionCookie, setSessionCookie } from '../cookies.js';
import {
  action,
  currentSession,
  field,
  formBody,
  redirectAfterPost,
  returnPath,
  sendPage,
  sendProblem,
  pathParam,
  SIGN_IN_REASONS,
  type SignInReason,
  type DashboardEnv,
} from '../route-steps.js';
import { html, type SafeHtml } from '../html.js';
import { notice, page } from '../layout.js';
import { fieldAttributes, fieldError, fieldProblemOf, refusedNotice, type FieldProblem } from '../field-errors.js';
import { acceptLink, findLink } from '../../members/service.js';
import { MIN_PASSWORD_LENGTH, SIGN_IN_BUSY_RETRY_AFTER_SEC, SIGN_IN_FAILURE_WINDOW_MS } from '../../members/policy.js';
import { isSameOrigin, setPageHeaders } from '../security.js';
import { endSession, startSession } from '../../members/sessions.js';
import { setModeCookie, type DashboardSession } from '../mode.js';
import { signIn } from '../../members/sign-in.js';
import { signInTurn } from '../sign-in-turns.js';

function signInForm(email: string, message: SafeHtml | null, next: string): string {
  return page({
    title: 'Sign in',
    session: null,
    body: html`${message}
      <form method="post" action="/dashboard/login">
        ${next === '/dashboard' ? '' : html`<input type="hidden" name="next" value="${next}" />`}
        <label for="email">Email</label>
        <input type="email" id="email" name="email" autocomplete="username" required value="${email}" />
        <label for="password">Password</label>
        <input type="password" id="password" name="password" autocomplete="current-password" required />
        <div><button type="submit">Sign in</button></div>
      </form>
      <p class="muted">No account yet? An admin of your organisation invites you with a one-time link.</p>`,
  });
}

function passwordForm(token: string, email: string, problem: FieldProblem | null): string {
  return page({
    title: 'Set your password',
    session: null,
    body: html`${problem ? refusedNotice('The password was not set', problem) : ''}
      <p id="password-help">
        Signing in as <strong>${outside(email)}</strong>. Choose a password of at least ${MIN_PASSWORD_LENGTH}
        characters that is hard to guess: common and breached passwords, and ones built on your name or email, are
        refused.
      </p>
      <form method="post" action="/dashboard/invite/${token}">
        <input type="email" name="username" autocomplete="username" value="${email}" hidden readonly />
        <label for="password">New password</label>
        <input
          type="password"
          id="password"
          name="password"
          autocomplete="new-password"
          minlength="${MIN_PASSWORD_LENGTH}"
          required
          ${fieldAttributes('password', problem, 'password-help')}
        />
        ${fieldError('password', problem)}
        <div><button type="submit">Set password and sign in</button></div>
      </form>`,
  });
}

function refuseCrossSite(ctx: Koa.Context, env: DashboardEnv): boolean {
  if (isSameOrigin(ctx, env.deps.config.publicBaseUrl)) return false;
  sendProblem(ctx, null, 403, 'This request came from another site and was refused; nothing was changed.');
  return true;
}

const LINK_GONE = 'This link is unknown, used or expired; ask an admin of your organisation for a new one.';

/** GET /dashboard/login: the sign-in form, or on to the page asked for when already signed in. */
async function showSignIn(ctx: Koa.Context, env: DashboardEnv): Promise<void> {
  setPageHeaders(ctx);
  const next = returnPath(ctx.query.next);
  if (await currentSession(env, ctx)) {
    ctx.redirect(next);
    return;
  }
  const ended = Object.hasOwn(SIGN_IN_REASONS, String(ctx.query.ended))
    ? SIGN_IN_REASONS[ctx.query.ended as SignInReason]
    : null;
  sendPage(ctx, 200, signInForm('', ended ? notice('info', ended) : null, next));
}

/** POST /dashboard/login: checks the email and password and, when right, starts a session. */
async function submitSignIn(ctx: Koa.Context, env: DashboardEnv): Promise<void> {
  setPageHeaders(ctx);
  if (refuseCrossSite(ctx, env)) return;
  const email = field(ctx, 'email');
  const next = returnPath(field(ctx, 'next'));
  const result = await signIn(
    env.deps.db,
    env.hashes,
    { email, password: field(ctx, 'password'), address: ctx.ip },
    env.lifetimes,
    env.deps.clock.now(),
  );
  if (result.kind === 'busy') {
    ctx.set('Retry-After', String(SIGN_IN_BUSY_RETRY_AFTER_SEC));
    const message = notice('error', 'Too many sign-ins are being checked right now; try again in a moment.');
    sendPage(ctx, 429, signInForm(email, message, next));
    return;
  }
  if (result.kind === 'throttled') {
    ctx.set('Retry-After', String(SIGN_IN_FAILURE_WINDOW_MS / 1000));
    const message = notice('error', 'Too many failed sign-ins for this account or address; try again in 15 minutes.');
    sendPage(ctx, 429, signInForm(email, message, next));
    return;
  }
  if (result.kind === 'refused') {
    sendPage(ctx, 401, signInForm(email, notice('error', 'The email or the password is not right.'), next));
    return;
  }
  setSessionCookie(ctx, result.token, env.lifetimes.absoluteMs, env.secureCookies);
  redirectAfterPost(ctx, next);
}

/** POST /dashboard/logout: ends the session; the next one starts in live mode. */
async function signOut(ctx: Koa.Context, session: DashboardSession, env: DashboardEnv): Promise<void> {
  await endSession(env.deps.db, session);
  clearSessionCookie(ctx, env.secureCookies);
  setModeCookie(ctx, 'live', env.secureCookies);
  redirectAfterPost(ctx, '/dashboard/login');
}

/** GET /dashboard/invite/:token: the form setting a password from a one-time link. */
async function showLink(ctx: Koa.Context, env: DashboardEnv): Promise<void> {
  setPageHeaders(ctx);
  const link = await findLink(env.deps.db, pathParam(ctx, 'token')!, env.deps.clock.now());
  if (!link) {
    sendProblem(ctx, null, 404, LINK_GONE);
    return;
  }
  sendPage(ctx, 200, passwordForm(pathParam(ctx, 'token')!, link.email, null));
}

/** POST /dashboard/invite/:token: sets the password, uses the link up and signs in. */
async function acceptLinkForm(ctx: Koa.Context, env: DashboardEnv): Promise<void> {
  setPageHeaders(ctx);
  if (refuseCrossSite(ctx, env)) return;
  const { db, clock } = env.deps;
  const token = pathParam(ctx, 'token')!;
  const now = clock.now();
  try {
    const user = await acceptLink(db, token, field(ctx, 'password'), now, ctx.ip);
    const { token: sessionToken } = await startSession(db, user, env.lifetimes, now, ctx.ip);
    setSessionCookie(ctx, sessionToken, env.lifetimes.absoluteMs, env.secureCookies);
    redirectAfterPost(ctx, '/dashboard');
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const problem = fieldProblemOf(error, ['password']);
    const link = problem ? await findLink(db, token, now) : undefined;
    if (!problem || !link) {
      sendProblem(ctx, null, 404, LINK_GONE);
      return;
    }
    sendPage(ctx, 400, passwordForm(token, link.email, problem));
  }
}

/** Registers the sign-in page, sign-out, and the one-time link pages. */
export function signInRoutes(router: Router, env: DashboardEnv): void {
  router.get('/dashboard/login', (ctx) => showSignIn(ctx, env));
  router.post('/dashboard/login', signInTurn, formBody, (ctx) => submitSignIn(ctx, env));
  router.post('/dashboard/logout', formBody, action(env, signOut, { anyRole: true }));
  router.get('/dashboard/invite/:token', (ctx) => showLink(ctx, env));
  router.post('/dashboard/invite/:token', formBody, (ctx) => acceptLinkForm(ctx, env));
}
