// How the dashboard writes times, money and keys for people.
import type { Mode } from '../orgs/modes.js';

/** A time to the minute, in UTC: `2026-11-26 09:41 UTC`; an em dash for none. */
export function minute(at: Date | string | null | undefined): string {
  if (at === null || at === undefined) return '—';
  const iso = (typeof at === 'string' ? new Date(at) : at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** A time to the second, in UTC, for logs. */
export function second(at: Date | string): string {
  const iso = (typeof at === 'string' ? new Date(at) : at).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

// Built once: toLocaleString would build a formatter on every call of a page.
const RUPEE_AMOUNT = new Intl.NumberFormat('en-IN', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const COUNT = new Intl.NumberFormat('en-IN');

/** An amount in paise as rupees: `₹1,234.50`. */
export function rupees(paise: number): string {
  return `₹${RUPEE_AMOUNT.format(paise / 100)}`;
}

/** A count with Indian digit grouping: `10,00,000`. */
export function count(value: number): string {
  return COUNT.format(value);
}

/** How many attempts failed, in words: `1 failed attempt`, `1,200 failed attempts`. */
export function failedAttempts(failed: number): string {
  return `${count(failed)} failed attempt${failed === 1 ? '' : 's'}`;
}

/** A time into a call, from its ms: `0:15.2` (minutes, then seconds to a tenth). */
export function callTime(ms: number): string {
  const tenths = Math.round(ms / 100);
  const seconds = (tenths % 600) / 10;
  return `${Math.floor(tenths / 600)}:${seconds < 10 ? '0' : ''}${seconds.toFixed(1)}`;
}

/** A key of `mode` as the dashboard shows it after creation: its mode and public prefix only. */
export function maskedKey(prefix: string, mode: Mode): string {
  return `svc_${mode}_${prefix}_…`;
}
