// What every dashboard answer carries (a strict CSP, no caching, no referrer to other sites) and the
// checks a state change must pass: a same-origin Origin (or Referer) and the session's CSRF token.
import { timingSafeEqual } from 'node:crypto';
import type Koa from 'koa';

/** Scripts and styles only from this origin, no inline code, no framing, forms only back here. */
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Sets the headers of every dashboard response. */
export function setPageHeaders(ctx: Koa.Context): void {
  ctx.set('Content-Security-Policy', PAGE_CSP);
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('Cache-Control', 'no-store');
  ctx.set('X-Content-Type-Options', 'nosniff');
}

function originOf(value: string): string | null {
  try {
    return new URL(value).origin;
  } catch {
    return null;
  }
}

/** The origin the request was sent to (Koa 3's ctx.origin is the Origin header, not this). */
export function requestOrigin(ctx: Koa.Context): string {
  return `${ctx.protocol}://${ctx.host}`;
}

/**
 * Whether the request was sent by a page of this server: its Origin, or when a browser sent none its
 * Referer, is the origin the request came to or the public base URL's. A request with neither fails.
 */
export function isSameOrigin(ctx: Koa.Context, publicBaseUrl: string): boolean {
  const allowed = new Set([requestOrigin(ctx), originOf(publicBaseUrl)]);
  const origin = ctx.get('Origin');
  if (origin) return origin !== 'null' && allowed.has(origin);
  const referer = ctx.get('Referer');
  return referer !== '' && allowed.has(originOf(referer));
}

/** Whether a form's token is the session's, compared in constant time. */
export function csrfMatches(expected: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}
