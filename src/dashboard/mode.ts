// The dashboard's test-mode switch. A signed-in member sees one of their org's two sets of data: the
// live org's, or its test twin's. The choice is kept in a cookie holding only the mode, so it can never
// name another org: the org is always worked out from the session's own (live) org.
import type Koa from 'koa';
import type { Db } from '../database/connect.js';
import type { Session } from '../members/sessions.js';
import { isLive, orgForMode, type Mode } from '../orgs/modes.js';

/** A signed-in member as a dashboard page sees them: the session, in the mode the switch is on. */
export interface DashboardSession extends Session {
  /** The mode the dashboard shows: live data, or the test twin's. */
  mode: Mode;
  /** The org whose calls, contacts, keys and webhooks the pages read and write in that mode. */
  modeOrgId: string;
}

/** The cookie's name. */
export const MODE_COOKIE = 'dashboard_mode';

function attributes(secure: boolean): string {
  return `Path=/dashboard; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The mode the request's cookie asks for: test only when it says exactly that, live otherwise. */
export function readMode(ctx: Koa.Context): Mode {
  return ctx.cookies.get(MODE_COOKIE) === 'test' ? 'test' : 'live';
}

/**
 * Keeps `mode` for the browser's next requests: test mode until the browser is closed or switched back;
 * live mode removes the cookie (live is what a request without one sees).
 */
export function setModeCookie(ctx: Koa.Context, mode: Mode, secure: boolean): void {
  const value = isLive(mode) ? '=; Max-Age=0' : '=test';
  ctx.append('Set-Cookie', `${MODE_COOKIE}${value}; ${attributes(secure)}`);
}

/** The session in `mode`, with the org holding that mode's data. */
export async function inMode(db: Db, session: Session, mode: Mode): Promise<DashboardSession> {
  return { ...session, mode, modeOrgId: await orgForMode(db, session.orgId, mode) };
}

/** Whether the session's changes are made in live mode, as an audit entry's `livemode` says it. */
export function livemodeOf(session: DashboardSession): boolean {
  return isLive(session.mode);
}
