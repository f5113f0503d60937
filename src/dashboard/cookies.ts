// The session cookie: HttpOnly, SameSite=Lax, only sent under /dashboard, Secure when the public base
// URL is https. Written as a header here, since behind a TLS-terminating proxy the process itself may
// see plain HTTP and Koa's cookie writer refuses Secure cookies then.
import type Koa from 'koa';

/** The cookie's name. */
export const SESSION_COOKIE = 'dashboard_session';

function attributes(secure: boolean): string {
  return `Path=/dashboard; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
}

/** Sets the session cookie to `token` (a base64url value) for the session's whole lifetime. */
export function setSessionCookie(ctx: Koa.Context, token: string, maxAgeMs: number, secure: boolean): void {
  ctx.append('Set-Cookie', `${SESSION_COOKIE}=${token}; Max-Age=${Math.floor(maxAgeMs / 1000)}; ${attributes(secure)}`);
}

/** Tells the browser to forget the session cookie. */
export function clearSessionCookie(ctx: Koa.Context, secure: boolean): void {
  ctx.append('Set-Cookie', `${SESSION_COOKIE}=; Max-Age=0; ${attributes(secure)}`);
}

/** The session cookie's value, if the request has a well-formed one. */
export function readSessionCookie(ctx: Koa.Context): string | null {
  const value = ctx.cookies.get(SESSION_COOKIE);
  return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : null;
}
