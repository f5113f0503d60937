// Wall-clock times in a chosen IANA time zone, for the campaign pages: a form's local date and time read
// as an instant, an instant written as the zone's wall time, and the zones a picker offers. The zone
// arithmetic itself is the campaign schedule's (src/campaigns/schedule.ts), so both read zones alike.
import { isKnownTimeZone, wallClockAt } from '../campaigns/schedule.js';

const LOCAL = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/**
 * The instant at which the wall clock in `zone` reads `local` (`YYYY-MM-DDTHH:MM`, as a datetime-local
 * field sends it), or null when `local` is no such date and time. A wall time that occurs twice (clocks
 * going back) is its first occurrence; one skipped (clocks going forward) is read with the offset in
 * force before the change, which lands after the gap.
 */
export function instantOfLocal(local: string, zone: string): Date | null {
  const match = LOCAL.exec(local);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map((part) => Number(part ?? 0));
  const wall = Date.UTC(year!, month! - 1, day, hour, minute, second);
  const check = new Date(wall);
  if (check.getUTCMonth() !== month! - 1 || check.getUTCDate() !== day! || hour! > 23 || minute! > 59) return null;
  // The offsets a day either side cover any change near the wall time; the earliest instant that
  // reads as it wins, else (a skipped time) the earlier offset.
  const offsets = [wall - 86_400_000, wall + 86_400_000].map((probe) => wallClockAt(zone, probe) - probe);
  const readsAsWall = offsets
    .map((offset) => wall - offset)
    .filter((instant) => wallClockAt(zone, instant) === wall)
    .sort((a, b) => a - b);
  return new Date(readsAsWall[0] ?? wall - offsets[0]!);
}

/** The wall time in `zone` at `at`, to the minute: `2026-12-01 09:30`. */
export function localMinute(at: Date | string, zone: string): string {
  const iso = new Date(wallClockAt(zone, new Date(at).getTime())).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/**
 * The time zones a picker offers: the runtime's IANA names, with `UTC` and the names in `extra` (a
 * default, a campaign's own) added when the runtime lists them under another name; sorted.
 */
export function zoneNames(extra: readonly string[]): string[] {
  const names = new Set(Intl.supportedValuesOf('timeZone'));
  for (const name of ['UTC', ...extra]) if (isKnownTimeZone(name)) names.add(name);
  return [...names].sort();
}
