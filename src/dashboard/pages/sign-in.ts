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
  type DashboardEnv,
} from '../route-steps.js';
import { html, type SafeHtml } from '../html.js';
import { notice, page } from '../layout.js';
import { acceptLink, findLink } from '../../members/service.js';
import { MIN_PASSWORD_LENGTH, SIGN_IN_BUSY_RETRY_AFTER_SEC, SIGN_IN_FAILURE_WINDOW_MS } from '../../members/policy.js';
import { isSameOrigin, setPageHeaders } from '../security.js';
import { endSession, startSession } from '../../members/sessions.js';
import { signIn } from '../../members/sign-in.js';

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

function passwordForm(token: string, email: string, message: SafeHtml | null): string {
  return page({
    title: 'Set your password',
    session: null,
    body: html`${message}
      <p>
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
        />
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

/** Registers the sign-in page, sign-out, and the one-time link pages. */
export function signInRoutes(router: Router, env: DashboardEnv): void {
  const { db, clock } = env.deps;

  router.get('/dashboard/login', async (ctx) => {
    setPageHeaders(ctx);
    const next = returnPath(ctx.query.next);
    if (await currentSession(env, ctx)) {
      ctx.redirect(next);
      return;
    }
    sendPage(ctx, 200, signInForm('', null, next));
  });

  router.post('/dashboard/login', formBody, async (ctx) => {
    setPageHeaders(ctx);
    if (refuseCrossSite(ctx, env)) return;
    const email = field(ctx, 'email');
    const next = returnPath(field(ctx, 'next'));
    const result = await signIn(
      db,
      env.hashes,
      { email, password: field(ctx, 'password'), address: ctx.ip },
      env.lifetimes,
      clock.now(),
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
  });

  router.post(
    '/dashboard/logout',
    formBody,
    action(
      env,
      async (ctx, session) => {
        await endSession(db, session);
        clearSessionCookie(ctx, env.secureCookies);
        redirectAfterPost(ctx, '/dashboard/login');
      },
      { anyRole: true },
    ),
  );

  router.get('/dashboard/invite/:token', async (ctx) => {
    setPageHeaders(ctx);
    const link = await findLink(db, ctx.params.token!, clock.now());
    if (!link) {
      sendProblem(ctx, null, 404, LINK_GONE);
      return;
    }
    sendPage(ctx, 200, passwordForm(ctx.params.token!, link.email, null));
  });

  router.post('/dashboard/invite/:token', formBody, async (ctx) => {
    setPageHeaders(ctx);
    if (refuseCrossSite(ctx, env)) return;
    const token = ctx.params.token!;
    const now = clock.now();
    try {
      const user = await acceptLink(db, token, field(ctx, 'password'), now, ctx.ip);
      const { token: sessionToken } = await startSession(db, user, env.lifetimes, now, ctx.ip);
      setSessionCookie(ctx, sessionToken, env.lifetimes.absoluteMs, env.secureCookies);
      redirectAfterPost(ctx, '/dashboard');
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const link = error.code === 'invalid_request' ? await findLink(db, token, now) : undefined;
      if (!link) {
        sendProblem(ctx, null, 404, LINK_GONE);
        return;
      }
      sendPage(ctx, 400, passwordForm(token, link.email, notice('error', error.message)));
    }
  });
}
