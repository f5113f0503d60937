// When a campaign may dial: its schedule's span (starts_at inclusive, ends_at exclusive) and its weekly
// windows, read as wall-clock time in the campaign's IANA time zone. Pure functions over instants; the
// zone's rules come from Intl (the ICU data Node ships), with one cached formatter per zone.
//
// The one rule: an instant is dialable when it lies in the span and its local wall time, on its local
// weekday, lies in a window (start inclusive, end exclusive, "24:00" meaning the end of that day).
// Daylight-saving follows from that rule rather than from special cases:
// - A wall time skipped on a spring-forward day never occurs. A window starting in the gap opens at the
//   first instant after it (a 02:30 start in New York opens at 03:00 EDT); a window ending in the gap
//   closes at the transition; a window lying wholly inside the gap does not open that day.
// - A wall time repeated on a fall-back day occurs twice, and is dialable both times when it lies in a
//   window. A window spanning the repeated hour lasts an hour longer in real time; a window ending
//   inside it closes, then opens again when the clock goes back into it.
// - Windows keep their wall-clock bounds, so a window's real length changes on transition days.
// Windows that overlap or touch, including one ending "24:00" and the next day's starting "00:00", form
// one open stretch. A window whose end is not after its start never opens.
//
// Finding the next opening walks forward in stretches of constant UTC offset, at most a day long, so it
// relies on a zone changing its offset at most once within a day (true of every zone's current rules).
import type { CampaignWindow } from '../../db/schema.js';

/** A campaign's schedule as the dispatcher reads it. */
export interface CampaignSchedule {
  startsAt: Date;
  endsAt: Date | null;
  /** An IANA time zone name, such as "Europe/London". */
  timezone: string;
  windows: CampaignWindow[];
}

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;
/** How far ahead an opening or a closing is looked for: the windows repeat weekly, plus a day for offsets. */
const SEARCH_HORIZON_MS = 8 * DAY_MS;
/** The longest stretch of instants assumed to share one UTC offset without checking inside it. */
const OFFSET_PROBE_MS = DAY_MS;
/** Local weekdays by index from Monday; day 0 of the epoch (1970-01-01) was a Thursday. */
const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
const EPOCH_WEEKDAY = 3;
const WINDOW_TIME = /^(?:([01]\d|2[0-3]):([0-5]\d)|24:00)$/;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Whether `name` is a time zone the service can schedule in: an IANA name (not a bare UTC offset). */
export function isKnownTimeZone(name: string): boolean {
  if (!/^[A-Za-z]/.test(name)) return false;
  try {
    formatterFor(name);
    return true;
  } catch {
    return false;
  }
}

/**
 * The wall-clock time in `timezone` at instant `at` (milliseconds), counted as if that wall time were
 * UTC: what a clock on the wall reads there. Throws RangeError for an unknown zone.
 */
export function wallClockAt(timezone: string, at: number): number {
  return wallTime(formatterFor(timezone), at);
}

/** Whether a campaign with `schedule` may dial at `at`. Throws RangeError for an unknown zone or window time. */
export function isDialable(schedule: CampaignSchedule, at: Date): boolean {
  const t = at.getTime();
  if (t < schedule.startsAt.getTime() || !beforeEnd(schedule, t)) return false;
  return inWindow(schedule.windows, wallTime(formatterFor(schedule.timezone), t));
}

/** The earliest dialable instant at or after `after`, or null when none comes before the schedule ends. */
export function nextDialableAt(schedule: CampaignSchedule, after: Date): Date | null {
  const from = Math.max(after.getTime(), schedule.startsAt.getTime());
  const limit = Math.min(schedule.endsAt?.getTime() ?? Infinity, from + SEARCH_HORIZON_MS);
  if (from >= limit) return null;
  const formatter = formatterFor(schedule.timezone);
  const open = openWallIntervals(schedule.windows, wallTime(formatter, from));
  for (const { start, end, offset } of constantOffsetStretches(formatter, from, limit)) {
    const interval = open.find((candidate) => candidate.end > start + offset);
    const opening = interval && Math.max(interval.start - offset, start);
    if (opening !== undefined && opening < end) return new Date(opening);
  }
  return null;
}

/**
 * When the open stretch holding `at` closes: the end of its windows (merged where they overlap or
 * touch, across midnight too), or the schedule's end if sooner. It is `at` itself when `at` is not
 * dialable, and the search horizon (days ahead) when the stretch is still open there.
 */
export function dialableUntil(schedule: CampaignSchedule, at: Date): Date {
  if (!isDialable(schedule, at)) return at;
  const from = at.getTime();
  const limit = Math.min(schedule.endsAt?.getTime() ?? Infinity, from + SEARCH_HORIZON_MS);
  const formatter = formatterFor(schedule.timezone);
  const open = openWallIntervals(schedule.windows, wallTime(formatter, from));
  for (const { start, end, offset } of constantOffsetStretches(formatter, from, limit)) {
    const wall = start + offset;
    const interval = open.find((candidate) => candidate.start <= wall && wall < candidate.end);
    if (!interval) return new Date(start);
    const closing = interval.end - offset;
    if (closing < end) return new Date(closing);
  }
  return new Date(limit);
}

/** A span of wall-clock time, in milliseconds of local time counted as if it were UTC. */
interface WallInterval {
  start: number;
  end: number;
}

/** Instants from `start` (inclusive) to `end` (exclusive) whose wall time is the instant plus `offset`. */
interface OffsetStretch {
  start: number;
  end: number;
  offset: number;
}

function beforeEnd(schedule: CampaignSchedule, t: number): boolean {
  return schedule.endsAt === null || t < schedule.endsAt.getTime();
}

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/**
 * The wall-clock time at instant `t`, in milliseconds of local time counted as if it were UTC. It reads
 * the digits of the en-US form (month, day, year, hour, minute, second), which is a few times faster
 * than formatToParts and does not depend on the separators between them.
 */
function wallTime(formatter: Intl.DateTimeFormat, t: number): number {
  const digits = formatter.format(t).match(/\d+/g)?.map(Number);
  if (digits?.length !== 6) throw new Error(`unexpected local time ${formatter.format(t)}`);
  const [month, day, year, hour, minute, second] = digits as [number, number, number, number, number, number];
  return Date.UTC(year, month - 1, day, hour, minute, second) + (t - Math.floor(t / 1000) * 1000);
}

/** The zone's offset from UTC at instant `t`, in milliseconds. */
function offsetAt(formatter: Intl.DateTimeFormat, t: number): number {
  return wallTime(formatter, t) - t;
}

/** Whether wall time `wall` lies in one of `windows` on its own weekday. */
function inWindow(windows: CampaignWindow[], wall: number): boolean {
  const day = Math.floor(wall / DAY_MS);
  const weekday = weekdayOf(day);
  const minute = Math.floor((wall - day * DAY_MS) / MINUTE_MS);
  return windows.some(
    (window) => window.days.includes(weekday) && minutesOf(window.start) <= minute && minute < minutesOf(window.end),
  );
}

/**
 * The windows as sorted, merged wall-clock intervals over the local days around `wall`: from the day
 * before (a stretch may have opened then, or the clock may go back into it) to past the search horizon.
 */
function openWallIntervals(windows: CampaignWindow[], wall: number): WallInterval[] {
  const firstDay = Math.floor(wall / DAY_MS) - 1;
  const lastDay = firstDay + SEARCH_HORIZON_MS / DAY_MS + 2;
  const intervals: WallInterval[] = [];
  for (let day = firstDay; day <= lastDay; day++) {
    const weekday = weekdayOf(day);
    for (const window of windows) {
      const start = minutesOf(window.start);
      const end = minutesOf(window.end);
      if (!window.days.includes(weekday) || end <= start) continue;
      intervals.push({ start: day * DAY_MS + start * MINUTE_MS, end: day * DAY_MS + end * MINUTE_MS });
    }
  }
  intervals.sort((a, b) => a.start - b.start);
  const merged: WallInterval[] = [];
  for (const interval of intervals) {
    const last = merged.at(-1);
    if (last && interval.start <= last.end) last.end = Math.max(last.end, interval.end);
    else merged.push({ ...interval });
  }
  return merged;
}

/** The instants from `from` to `limit`, cut where the zone's offset changes and at least daily. */
function* constantOffsetStretches(
  formatter: Intl.DateTimeFormat,
  from: number,
  limit: number,
): Generator<OffsetStretch> {
  let start = from;
  let offset = offsetAt(formatter, start);
  while (start < limit) {
    const probe = Math.min(start + OFFSET_PROBE_MS, limit);
    const probeOffset = offsetAt(formatter, probe);
    if (probeOffset === offset) {
      yield { start, end: probe, offset };
      start = probe;
      continue;
    }
    // The offset is a function of the whole second; find the first second with the new one.
    let sameSecond = Math.floor(start / 1000);
    let changedSecond = Math.floor(probe / 1000);
    let changedOffset = probeOffset;
    while (changedSecond - sameSecond > 1) {
      const middle = Math.floor((sameSecond + changedSecond) / 2);
      const middleOffset = offsetAt(formatter, middle * 1000);
      if (middleOffset === offset) sameSecond = middle;
      else [changedSecond, changedOffset] = [middle, middleOffset];
    }
    const transition = changedSecond * 1000;
    yield { start, end: transition, offset };
    [start, offset] = [transition, changedOffset];
  }
}

function weekdayOf(day: number): CampaignWindow['days'][number] {
  return WEEKDAYS[(((day + EPOCH_WEEKDAY) % 7) + 7) % 7]!;
}

/** Minutes after local midnight of a window bound "HH:MM" ("24:00" is the day's end). */
function minutesOf(time: string): number {
  const match = WINDOW_TIME.exec(time);
  if (!match) throw new RangeError(`window time ${JSON.stringify(time)} is not HH:MM`);
  return match[1] === undefined ? 24 * 60 : Number(match[1]) * 60 + Number(match[2]);
}
