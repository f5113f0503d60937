// Wall-clock times in a chosen IANA time zone, for the campaign pages: a form's local date and time read
// as an instant, an instant written as the zone's wall time, and the zones a picker offers.

// One formatter per zone, built on first use (building one costs far more than formatting with it).
const FORMATTERS = new Map<string, Intl.DateTimeFormat>();

function formatterOf(zone: string): Intl.DateTimeFormat {
  let formatter = FORMATTERS.get(zone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    FORMATTERS.set(zone, formatter);
  }
  return formatter;
}

/** The wall time in `zone` at `at`, as milliseconds counted as if that wall time were UTC. */
function wallMs(at: number, zone: string): number {
  const part: Record<string, number> = {};
  for (const { type, value } of formatterOf(zone).formatToParts(at)) part[type] = Number(value);
  return Date.UTC(part.year!, part.month! - 1, part.day, part.hour, part.minute, part.second);
}

/** Whether `zone` is a time zone name this runtime knows. */
export function isZoneName(zone: string): boolean {
  try {
    formatterOf(zone);
    return true;
  } catch {
    return false;
  }
}

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
  const offsets = [wall - 86_400_000, wall + 86_400_000].map((probe) => wallMs(probe, zone) - probe);
  const readsAsWall = offsets
    .map((offset) => wall - offset)
    .filter((instant) => wallMs(instant, zone) === wall)
    .sort((a, b) => a - b);
  return new Date(readsAsWall[0] ?? wall - offsets[0]!);
}

/** The wall time in `zone` at `at`, to the minute: `2026-12-01 09:30`. */
export function localMinute(at: Date | string, zone: string): string {
  const iso = new Date(wallMs(new Date(at).getTime(), zone)).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/**
 * The time zones a picker offers: the runtime's IANA names, with `UTC` and the names in `extra` (a
 * default, a campaign's own) added when the runtime lists them under another name; sorted.
 */
export function zoneNames(extra: readonly string[]): string[] {
  const names = new Set(Intl.supportedValuesOf('timeZone'));
  for (const name of ['UTC', ...extra]) if (isZoneName(name)) names.add(name);
  return [...names].sort();
}
