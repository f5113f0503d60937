// What a page says after a form sent the browser back to it (`?done=`). The outcome in the address is
// sealed with the session's own secret (its CSRF token), so only the session that made the change sees
// its notice: a link made elsewhere with a `?done=` (a false "The number was removed") shows nothing.
import { createHmac } from 'node:crypto';
import type Koa from 'koa';
import type { DashboardSession } from './mode.js';
import { csrfMatches } from './security.js';

function seal(session: DashboardSession, path: string, done: string): string {
  return createHmac('sha256', session.csrfToken).update(`${path}\n${done}`).digest('base64url').slice(0, 22);
}

/** Where to send the browser after a change: `path` with the outcome `done`, sealed for this session. */
export function doneLocation(path: string, session: DashboardSession, done: string): string {
  return `${path}?done=${encodeURIComponent(done)}.${seal(session, path, done)}`;
}

/** The outcome `?done=` names on this page, when this session's change put it there; null otherwise. */
export function doneOf(ctx: Koa.Context, session: DashboardSession): string | null {
  const given = ctx.query.done;
  if (typeof given !== 'string') return null;
  const at = given.lastIndexOf('.');
  if (at < 0) return null;
  const done = given.slice(0, at);
  return csrfMatches(seal(session, ctx.path, done), given.slice(at + 1)) ? done : null;
}
