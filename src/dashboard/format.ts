// How the dashboard writes times, money and keys for people.

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

// Built once: toLocaleString builds a formatter on every call, which cost a page of 50 calls 2 ms.
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

/** A key as the dashboard shows it after creation: the public prefix only. */
export function maskedKey(prefix: string): string {
  return `svc_live_${prefix}_…`;
}
