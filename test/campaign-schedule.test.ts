// A campaign's calling windows as pure functions of the clock: local weekdays and wall times in several
// zones (one without daylight saving, two across both of their 2026 transitions, one with a half-hour
// shift), the schedule's start and end (end exclusive), windows that touch, overlap or end at "24:00",
// the next opening across a weekend and a transition, and zones the service does not know.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CampaignWindow } from '../db/schema.js';
import {
  dialableUntil,
  isDialable,
  isKnownTimeZone,
  nextDialableAt,
  type CampaignSchedule,
} from '../src/campaigns/schedule.js';

const WEEKDAYS: CampaignWindow['days'] = ['mon', 'tue', 'wed', 'thu', 'fri'];
const ALL_DAYS: CampaignWindow['days'] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** A schedule in `timezone` open in `windows`, from 2026-01-01 with no end unless given. */
function schedule(
  timezone: string,
  windows: CampaignWindow[],
  span: { startsAt?: string; endsAt?: string } = {},
): CampaignSchedule {
  return {
    startsAt: new Date(span.startsAt ?? '2026-01-01T00:00:00Z'),
    endsAt: span.endsAt === undefined ? null : new Date(span.endsAt),
    timezone,
    windows,
  };
}

const at = (iso: string) => new Date(iso);
const iso = (date: Date | null) => date?.toISOString() ?? null;
const before = (instant: string) => new Date(at(instant).getTime() - 1);

describe('isDialable', () => {
  it('reads the window in the zone without daylight saving, end exclusive', () => {
    const kolkata = schedule('Asia/Kolkata', [{ days: WEEKDAYS, start: '09:00', end: '18:00' }]);
    // Monday 2026-03-02 09:00 and 18:00 IST (+05:30).
    expect(isDialable(kolkata, before('2026-03-02T03:30:00Z'))).toBe(false);
    expect(isDialable(kolkata, at('2026-03-02T03:30:00Z'))).toBe(true);
    expect(isDialable(kolkata, before('2026-03-02T12:30:00Z'))).toBe(true);
    expect(isDialable(kolkata, at('2026-03-02T12:30:00Z'))).toBe(false);
    // Saturday 2026-03-07 10:00 IST.
    expect(isDialable(kolkata, at('2026-03-07T04:30:00Z'))).toBe(false);
  });

  it('takes the weekday from the local calendar, not from UTC', () => {
    // Sunday 2026-03-01 20:00 UTC is Monday 01:30 in Kolkata.
    const sundayUtc = at('2026-03-01T20:00:00Z');
    expect(isDialable(schedule('Asia/Kolkata', [{ days: ['mon'], start: '00:00', end: '02:00' }]), sundayUtc)).toBe(
      true,
    );
    expect(isDialable(schedule('Asia/Kolkata', [{ days: ['sun'], start: '00:00', end: '24:00' }]), sundayUtc)).toBe(
      false,
    );
    // Monday 2026-03-02 02:00 UTC is Sunday 21:00 in New York.
    const mondayUtc = at('2026-03-02T02:00:00Z');
    expect(isDialable(schedule('America/New_York', [{ days: ['sun'], start: '20:00', end: '22:00' }]), mondayUtc)).toBe(
      true,
    );
    expect(isDialable(schedule('America/New_York', [{ days: ['mon'], start: '00:00', end: '24:00' }]), mondayUtc)).toBe(
      false,
    );
  });

  it('dials from starts_at and stops before ends_at', () => {
    const span = schedule('UTC', [{ days: ALL_DAYS, start: '00:00', end: '24:00' }], {
      startsAt: '2026-05-04T10:00:00Z',
      endsAt: '2026-05-06T10:00:00Z',
    });
    expect(isDialable(span, before('2026-05-04T10:00:00Z'))).toBe(false);
    expect(isDialable(span, at('2026-05-04T10:00:00Z'))).toBe(true);
    expect(isDialable(span, before('2026-05-06T10:00:00Z'))).toBe(true);
    expect(isDialable(span, at('2026-05-06T10:00:00Z'))).toBe(false);
  });

  it('joins touching and overlapping windows and reads "24:00" as the end of the day', () => {
    const london = schedule('Europe/London', [
      { days: ['fri'], start: '09:00', end: '12:00' },
      { days: ['fri'], start: '12:00', end: '15:00' },
      { days: ['fri'], start: '14:00', end: '24:00' },
      { days: ['sat'], start: '00:00', end: '06:00' },
    ]);
    // Friday 2026-06-05 and Saturday 2026-06-06, BST (+01:00).
    expect(isDialable(london, at('2026-06-05T11:00:00Z'))).toBe(true);
    expect(isDialable(london, before('2026-06-05T23:00:00Z'))).toBe(true);
    expect(isDialable(london, at('2026-06-05T23:00:00Z'))).toBe(true);
    expect(isDialable(london, at('2026-06-06T05:00:00Z'))).toBe(false);
  });

  it('skips the wall times a spring-forward day does not have', () => {
    // New York, Sunday 2026-03-08: 02:00 EST (07:00 UTC) becomes 03:00 EDT.
    const newYork = schedule('America/New_York', [{ days: ['sun'], start: '02:30', end: '04:00' }]);
    expect(isDialable(newYork, before('2026-03-08T07:00:00Z'))).toBe(false);
    expect(isDialable(newYork, at('2026-03-08T07:00:00Z'))).toBe(true);
    expect(isDialable(newYork, before('2026-03-08T08:00:00Z'))).toBe(true);
    expect(isDialable(newYork, at('2026-03-08T08:00:00Z'))).toBe(false);
  });

  it('dials a repeated wall time of a fall-back day both times', () => {
    // New York, Sunday 2026-11-01: 02:00 EDT (06:00 UTC) becomes 01:00 EST; 01:30 comes twice.
    const newYork = schedule('America/New_York', [{ days: ['sun'], start: '01:15', end: '01:45' }]);
    expect(isDialable(newYork, at('2026-11-01T05:30:00Z'))).toBe(true);
    expect(isDialable(newYork, at('2026-11-01T06:00:00Z'))).toBe(false);
    expect(isDialable(newYork, at('2026-11-01T06:30:00Z'))).toBe(true);
    expect(isDialable(newYork, at('2026-11-01T06:45:00Z'))).toBe(false);
  });

  it('opens no window whose end is not after its start', () => {
    const empty = schedule('UTC', [{ days: ALL_DAYS, start: '10:00', end: '10:00' }]);
    expect(isDialable(empty, at('2026-05-04T10:00:00Z'))).toBe(false);
    expect(nextDialableAt(empty, at('2026-05-04T00:00:00Z'))).toBeNull();
  });

  it('refuses a window time that is not HH:MM', () => {
    for (const start of ['9:00', '24:30', '12:60', '']) {
      expect(() =>
        isDialable(schedule('UTC', [{ days: ALL_DAYS, start, end: '18:00' }]), at('2026-05-04T10:00:00Z')),
      ).toThrow(RangeError);
    }
  });
});

describe('nextDialableAt', () => {
  const newYorkOffice = schedule('America/New_York', [{ days: WEEKDAYS, start: '09:00', end: '17:00' }]);

  it('answers the instant itself when it is dialable', () => {
    expect(iso(nextDialableAt(newYorkOffice, at('2026-03-04T15:00:00Z')))).toBe('2026-03-04T15:00:00.000Z');
  });

  it('waits over a weekend that springs forward', () => {
    // Friday 2026-03-06 17:00 EST; Monday 2026-03-09 09:00 is EDT (-04:00).
    expect(iso(nextDialableAt(newYorkOffice, at('2026-03-06T22:00:00Z')))).toBe('2026-03-09T13:00:00.000Z');
  });

  it('waits over a weekend that falls back', () => {
    // Friday 2026-10-23 17:00 BST; Monday 2026-10-26 09:00 is GMT (+00:00).
    const londonOffice = schedule('Europe/London', [{ days: WEEKDAYS, start: '09:00', end: '17:00' }]);
    expect(iso(nextDialableAt(londonOffice, at('2026-10-23T16:00:00Z')))).toBe('2026-10-26T09:00:00.000Z');
  });

  it('opens a window starting in the spring-forward gap at the first instant after it', () => {
    const newYork = schedule('America/New_York', [{ days: ['sun'], start: '02:30', end: '04:00' }]);
    expect(iso(nextDialableAt(newYork, at('2026-03-08T05:00:00Z')))).toBe('2026-03-08T07:00:00.000Z');
    const london = schedule('Europe/London', [{ days: ['sun'], start: '01:00', end: '03:00' }]);
    expect(iso(nextDialableAt(london, at('2026-03-29T00:00:00Z')))).toBe('2026-03-29T01:00:00.000Z');
  });

  it('skips a window lying wholly inside the gap to its next week', () => {
    const newYork = schedule('America/New_York', [{ days: ['sun'], start: '02:00', end: '02:30' }]);
    expect(iso(nextDialableAt(newYork, at('2026-03-08T05:00:00Z')))).toBe('2026-03-15T06:00:00.000Z');
  });

  it('opens again when the clock falls back into a window', () => {
    // New York, Sunday 2026-11-01: a window closing at 01:30 EDT opens again at 01:00 EST.
    const newYork = schedule('America/New_York', [{ days: ['sun'], start: '00:00', end: '01:30' }]);
    expect(iso(nextDialableAt(newYork, at('2026-11-01T05:30:00Z')))).toBe('2026-11-01T06:00:00.000Z');
    expect(iso(nextDialableAt(newYork, at('2026-11-01T06:30:00Z')))).toBe('2026-11-08T05:00:00.000Z');
  });

  it('follows a half-hour shift', () => {
    // Lord Howe Island, Sunday 2026-10-04: 02:00 (+10:30, 15:30 UTC on the 3rd) becomes 02:30 (+11:00).
    const lordHowe = schedule('Australia/Lord_Howe', [{ days: ['sun'], start: '02:00', end: '03:00' }]);
    expect(iso(nextDialableAt(lordHowe, at('2026-10-03T15:00:00Z')))).toBe('2026-10-03T15:30:00.000Z');
    // Sunday 2026-04-05: 02:00 (+11:00) becomes 01:30 (+10:30); the window opens at 02:00 (+10:30).
    expect(iso(nextDialableAt(lordHowe, at('2026-04-04T14:00:00Z')))).toBe('2026-04-04T15:30:00.000Z');
  });

  it('starts no earlier than starts_at', () => {
    const later = { ...newYorkOffice, startsAt: at('2026-03-04T18:00:00Z') };
    expect(iso(nextDialableAt(later, at('2026-03-02T00:00:00Z')))).toBe('2026-03-04T18:00:00.000Z');
    const afterHours = { ...newYorkOffice, startsAt: at('2026-03-04T23:00:00Z') };
    expect(iso(nextDialableAt(afterHours, at('2026-03-02T00:00:00Z')))).toBe('2026-03-05T14:00:00.000Z');
  });

  it('is null when the campaign ends before the next opening', () => {
    // The next opening is Monday 2026-03-09 13:00 UTC.
    const endsAtOpening = { ...newYorkOffice, endsAt: at('2026-03-09T13:00:00Z') };
    expect(nextDialableAt(endsAtOpening, at('2026-03-06T22:00:00Z'))).toBeNull();
    const endsJustAfter = { ...newYorkOffice, endsAt: at('2026-03-09T13:00:00.001Z') };
    expect(iso(nextDialableAt(endsJustAfter, at('2026-03-06T22:00:00Z')))).toBe('2026-03-09T13:00:00.000Z');
    expect(nextDialableAt(endsAtOpening, at('2026-03-10T00:00:00Z'))).toBeNull();
  });

  it('is null without windows', () => {
    expect(nextDialableAt(schedule('UTC', []), at('2026-05-04T00:00:00Z'))).toBeNull();
  });
});

describe('dialableUntil', () => {
  it('runs to the end of touching and overlapping windows, across midnight', () => {
    const london = schedule('Europe/London', [
      { days: ['fri'], start: '09:00', end: '12:00' },
      { days: ['fri'], start: '12:00', end: '15:00' },
      { days: ['fri'], start: '14:00', end: '24:00' },
      { days: ['sat'], start: '00:00', end: '06:00' },
    ]);
    // Friday 2026-06-05 10:00 BST until Saturday 06:00 BST.
    expect(iso(dialableUntil(london, at('2026-06-05T09:00:00Z')))).toBe('2026-06-06T05:00:00.000Z');
  });

  it('closes at midnight when a "24:00" window has no follower', () => {
    const kolkata = schedule('Asia/Kolkata', [{ days: ['mon'], start: '20:00', end: '24:00' }]);
    expect(iso(dialableUntil(kolkata, at('2026-03-02T15:00:00Z')))).toBe('2026-03-02T18:30:00.000Z');
  });

  it('is the instant itself when it is not dialable', () => {
    const kolkata = schedule('Asia/Kolkata', [{ days: ['mon'], start: '20:00', end: '24:00' }]);
    expect(iso(dialableUntil(kolkata, at('2026-03-02T10:00:00Z')))).toBe('2026-03-02T10:00:00.000Z');
  });

  it('stops at ends_at', () => {
    const span = schedule('UTC', [{ days: ALL_DAYS, start: '00:00', end: '24:00' }], {
      endsAt: '2026-05-06T10:00:00Z',
    });
    expect(iso(dialableUntil(span, at('2026-05-04T10:00:00Z')))).toBe('2026-05-06T10:00:00.000Z');
  });

  it('answers a week or more ahead for a stretch that does not close', () => {
    const always = schedule('Australia/Lord_Howe', [{ days: ALL_DAYS, start: '00:00', end: '24:00' }]);
    const from = at('2026-04-01T00:00:00Z');
    expect(dialableUntil(always, from).getTime() - from.getTime()).toBeGreaterThanOrEqual(7 * 86_400_000);
  });

  it('keeps wall-clock bounds across the spring-forward gap', () => {
    // New York, Sunday 2026-03-08: 01:00-04:00 lasts two real hours; 01:00-02:30 closes at the jump.
    const newYork = schedule('America/New_York', [{ days: ['sun'], start: '01:00', end: '04:00' }]);
    expect(iso(dialableUntil(newYork, at('2026-03-08T06:00:00Z')))).toBe('2026-03-08T08:00:00.000Z');
    const endsInGap = schedule('America/New_York', [{ days: ['sun'], start: '01:00', end: '02:30' }]);
    expect(iso(dialableUntil(endsInGap, at('2026-03-08T06:00:00Z')))).toBe('2026-03-08T07:00:00.000Z');
  });

  it('keeps wall-clock bounds across the fall-back overlap', () => {
    // New York, Sunday 2026-11-01: 01:00-02:00 lasts two real hours, 00:00-01:30 closes twice.
    const newYork = schedule('America/New_York', [{ days: ['sun'], start: '01:00', end: '02:00' }]);
    expect(iso(dialableUntil(newYork, at('2026-11-01T05:00:00Z')))).toBe('2026-11-01T07:00:00.000Z');
    const twice = schedule('America/New_York', [{ days: ['sun'], start: '00:00', end: '01:30' }]);
    expect(iso(dialableUntil(twice, at('2026-11-01T04:00:00Z')))).toBe('2026-11-01T05:30:00.000Z');
    expect(iso(dialableUntil(twice, at('2026-11-01T06:00:00Z')))).toBe('2026-11-01T06:30:00.000Z');
    // London, Sunday 2026-10-25: 02:00 BST (01:00 UTC) becomes 01:00 GMT.
    const london = schedule('Europe/London', [{ days: ['sun'], start: '01:00', end: '02:00' }]);
    expect(iso(dialableUntil(london, at('2026-10-25T00:00:00Z')))).toBe('2026-10-25T02:00:00.000Z');
  });

  it('runs through a half-hour fall-back', () => {
    // Lord Howe Island, Sunday 2026-04-05: 01:30-02:00 comes twice, back to back.
    const lordHowe = schedule('Australia/Lord_Howe', [{ days: ['sun'], start: '01:30', end: '02:00' }]);
    expect(iso(dialableUntil(lordHowe, at('2026-04-04T14:30:00Z')))).toBe('2026-04-04T15:30:00.000Z');
  });
});

describe('the three functions agree with a scan of the clock', () => {
  const zones = ['Asia/Kolkata', 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'America/Santiago'];
  // Windows on quarter hours in zones whose offsets are whole half hours: whether an instant is
  // dialable can change only on a quarter hour of UTC, so sampling those finds every change.
  const QUARTER_MS = 15 * 60_000;
  const hhmm = fc
    .tuple(fc.integer({ min: 0, max: 23 }), fc.constantFrom(0, 15, 30, 45))
    .map(([hour, minute]) => `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`);
  const window = fc
    .record({
      days: fc.subarray([...ALL_DAYS], { minLength: 1 }),
      start: hhmm,
      end: fc.oneof(hhmm, fc.constant('24:00')),
    })
    .filter((candidate) => candidate.start < candidate.end);
  // Instants around 2026's transitions in these zones.
  const instant = fc
    .constantFrom('2026-03-07', '2026-03-28', '2026-04-04', '2026-09-05', '2026-10-03', '2026-10-24', '2026-10-31')
    .chain((day) => fc.integer({ min: 0, max: 3 * 86_400 }).map((s) => new Date(Date.parse(day) + s * 1000)));

  /** Whether every sampled instant of [from, to) is dialable (`expected` true) or none is (false). */
  function scanAgrees(plan: CampaignSchedule, from: number, to: number, expected: boolean): boolean {
    for (let t = from; t < to; t = (Math.floor(t / QUARTER_MS) + 1) * QUARTER_MS) {
      if (isDialable(plan, new Date(t)) !== expected) return false;
    }
    return true;
  }

  it('opens at the first dialable instant and closes at the first one after it that is not', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...zones),
        fc.array(window, { minLength: 1, maxLength: 3 }),
        instant,
        (zone, windows, after) => {
          const plan = schedule(zone, windows);
          const opening = nextDialableAt(plan, after);
          expect(opening).not.toBeNull();
          const open = opening!.getTime();
          expect(scanAgrees(plan, after.getTime(), open, false)).toBe(true);
          const closing = dialableUntil(plan, opening!).getTime();
          expect(closing).toBeGreaterThan(open);
          expect(scanAgrees(plan, open, closing, true)).toBe(true);
          // A stretch open all week is answered at the search horizon, still open.
          if (closing - open < 7 * 86_400_000) expect(isDialable(plan, new Date(closing))).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('isKnownTimeZone', () => {
  it('knows IANA names and nothing else', () => {
    for (const name of ['America/New_York', 'Asia/Kolkata', 'Europe/London', 'Australia/Lord_Howe', 'UTC']) {
      expect(isKnownTimeZone(name), name).toBe(true);
    }
    for (const name of ['Mars/Olympus_Mons', 'New York', '', '+05:30', '-03:00']) {
      expect(isKnownTimeZone(name), name).toBe(false);
    }
  });

  it('makes the schedule functions throw for an unknown zone', () => {
    const nowhere = schedule('Mars/Olympus_Mons', [{ days: ALL_DAYS, start: '00:00', end: '24:00' }]);
    expect(() => isDialable(nowhere, at('2026-05-04T10:00:00Z'))).toThrow(RangeError);
    expect(() => nextDialableAt(nowhere, at('2026-05-04T10:00:00Z'))).toThrow(RangeError);
    expect(() => dialableUntil(nowhere, at('2026-05-04T10:00:00Z'))).toThrow(RangeError);
  });
});
