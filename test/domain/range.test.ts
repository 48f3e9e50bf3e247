import { describe, expect, it } from 'vitest';
import { BadParameterError, FootfallError } from '../../lambdas/domain/errors.js';
import {
  addDays,
  addYears,
  dayStart,
  daysBetween,
  eachDay,
  hoursOfDay,
  isValidDay,
  localDay,
  localHour,
  RANGE_NAMES,
  rangeBounds,
  resolveRange,
  splitMonths,
  type RangeName,
  type RangeQuery,
} from '../../lambdas/domain/range.js';

const HOUR = 3_600_000;
const ms = (iso: string): number => Date.parse(iso);

/** The BadParameterError `fn` throws (fails the test when it throws anything else or nothing). */
function badParameter(fn: () => unknown): BadParameterError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(BadParameterError);
    return err as BadParameterError;
  }
  throw new Error('expected a BadParameterError');
}

// 22:45 UTC on 2026-06-15: already 2026-06-16 east of UTC+1:15, still 2026-06-15 west of it.
const NOW = ms('2026-06-15T22:45:00Z');
const FIRST_DAY = '2026-01-10';

/** Each zone and the local day of NOW there (`docs/api.md` "Conventions": days are local dates). */
const ZONES: [string, string][] = [
  ['UTC', '2026-06-15'],
  ['Europe/Berlin', '2026-06-16'], // 00:45 CEST
  ['America/Los_Angeles', '2026-06-15'], // 15:45 PDT
  ['Asia/Kolkata', '2026-06-16'], // 04:15 IST (+5:30)
  ['Pacific/Kiritimati', '2026-06-16'], // 12:45 (+14)
  ['Pacific/Pago_Pago', '2026-06-15'], // 11:45 (-11)
];

/** name → [from, to, days, previous.from, previous.to], for each of the two local days of NOW. */
const EXPECTED: Record<string, Record<RangeName, [string, string, number, string, string]>> = {
  '2026-06-15': {
    today: ['2026-06-15', '2026-06-15', 1, '2026-06-14', '2026-06-14'],
    '7d': ['2026-06-09', '2026-06-15', 7, '2026-06-02', '2026-06-08'],
    '30d': ['2026-05-17', '2026-06-15', 30, '2026-04-17', '2026-05-16'],
    '90d': ['2026-03-18', '2026-06-15', 90, '2025-12-18', '2026-03-17'],
    '12m': ['2025-06-16', '2026-06-15', 365, '2024-06-16', '2025-06-15'],
    all: ['2026-01-10', '2026-06-15', 157, '2025-08-06', '2026-01-09'],
  },
  '2026-06-16': {
    today: ['2026-06-16', '2026-06-16', 1, '2026-06-15', '2026-06-15'],
    '7d': ['2026-06-10', '2026-06-16', 7, '2026-06-03', '2026-06-09'],
    '30d': ['2026-05-18', '2026-06-16', 30, '2026-04-18', '2026-05-17'],
    '90d': ['2026-03-19', '2026-06-16', 90, '2025-12-19', '2026-03-18'],
    '12m': ['2025-06-17', '2026-06-16', 365, '2024-06-17', '2025-06-16'],
    all: ['2026-01-10', '2026-06-16', 158, '2025-08-05', '2026-01-09'],
  },
};

describe('resolveRange: named ranges end on the local day of now', () => {
  const rows = ZONES.flatMap(([timezone, today]) =>
    RANGE_NAMES.map(
      (name) =>
        [
          timezone,
          name,
          ...(EXPECTED[today] as Record<RangeName, [string, string, number, string, string]>)[name],
        ] as const,
    ),
  );

  it.each(rows)('%s %s → %s..%s (%i days), previous %s..%s', (timezone, name, from, to, days, prevFrom, prevTo) => {
    expect(resolveRange({ range: name }, { now: NOW, timezone, firstDay: FIRST_DAY })).toEqual({
      range: { from, to, timezone },
      previous: { from: prevFrom, to: prevTo, timezone },
      days,
      name,
    });
  });

  // 05:00 UTC on 2026-01-01 is still 2025-12-31 in Los Angeles and Pago Pago: the year differs too.
  it.each([
    ['UTC', 'today', '2026-01-01', '2026-01-01'],
    ['America/Los_Angeles', 'today', '2025-12-31', '2025-12-31'],
    ['Pacific/Pago_Pago', '7d', '2025-12-25', '2025-12-31'],
    ['Pacific/Kiritimati', '7d', '2025-12-26', '2026-01-01'],
    ['Asia/Kolkata', '30d', '2025-12-03', '2026-01-01'],
    ['America/Los_Angeles', '90d', '2025-10-03', '2025-12-31'],
    ['Europe/Berlin', '12m', '2025-01-02', '2026-01-01'],
    ['Pacific/Pago_Pago', '12m', '2025-01-01', '2025-12-31'],
  ] as const)('year boundary: %s %s → %s..%s', (timezone, name, from, to) => {
    const r = resolveRange({ range: name }, { now: ms('2026-01-01T05:00:00Z'), timezone, firstDay: '2020-01-01' });
    expect(r.range).toEqual({ from, to, timezone });
  });
});

describe('resolveRange: leap days', () => {
  it.each([
    // 12m: the day after the same date a year earlier; from a leap day that date is Feb 28.
    ['12m', '2028-02-29', '2027-03-01', 366, '2026-02-28', '2027-02-28'],
    ['12m', '2028-02-28', '2027-03-01', 365, '2026-03-01', '2027-02-28'],
    ['12m', '2028-03-01', '2027-03-02', 366, '2026-03-01', '2027-03-01'],
    ['12m', '2025-02-28', '2024-02-29', 366, '2023-02-28', '2024-02-28'],
    ['12m', '2026-11-21', '2025-11-22', 365, '2024-11-22', '2025-11-21'],
    ['7d', '2024-03-02', '2024-02-25', 7, '2024-02-18', '2024-02-24'],
    ['30d', '2024-03-15', '2024-02-15', 30, '2024-01-16', '2024-02-14'],
    ['today', '2024-02-29', '2024-02-29', 1, '2024-02-28', '2024-02-28'],
    ['today', '2024-03-01', '2024-03-01', 1, '2024-02-29', '2024-02-29'],
  ] as const)('%s on %s → from %s (%i days), previous %s..%s', (name, today, from, days, prevFrom, prevTo) => {
    const r = resolveRange({ range: name }, { now: ms(`${today}T12:00:00Z`), timezone: 'UTC', firstDay: '2000-01-01' });
    expect(r.range).toEqual({ from, to: today, timezone: 'UTC' });
    expect(r.days).toBe(days);
    expect(r.previous).toEqual({ from: prevFrom, to: prevTo, timezone: 'UTC' });
    expect(daysBetween(r.previous.from, r.previous.to)).toBe(days);
  });
});

describe('resolveRange: default range: 30d, or all for a site tracked 30 days or less', () => {
  const now = ms('2026-06-15T12:00:00Z'); // today is 2026-06-15 in UTC
  it.each([
    ['never tracked', null, 'all', '2026-06-15', 1],
    ['first day today', '2026-06-15', 'all', '2026-06-15', 1],
    ['first day 10 days ago', '2026-06-05', 'all', '2026-06-05', 11],
    ['first day 29 days ago (30 days tracked)', '2026-05-17', 'all', '2026-05-17', 30],
    ['first day 30 days ago (31 days tracked)', '2026-05-16', '30d', '2026-05-17', 30],
    ['first day a year ago', '2025-06-15', '30d', '2026-05-17', 30],
    ['first day after today', '2026-06-20', 'all', '2026-06-15', 1],
  ] as const)('%s → %s from %s (%i days)', (_label, firstDay, name, from, days) => {
    const r = resolveRange({}, { now, timezone: 'UTC', firstDay });
    expect(r).toMatchObject({ name, days, range: { from, to: '2026-06-15', timezone: 'UTC' } });
  });

  it.each([
    [null, '2026-06-15'],
    ['2026-06-01', '2026-06-01'],
    ['2016-06-01', '2016-06-01'], // `all` is not bound by the 10-year limit on explicit ranges
    ['2026-07-01', '2026-06-15'],
  ] as const)('range=all with firstDay %s starts on %s', (firstDay, from) => {
    const r = resolveRange({ range: 'all' }, { now, timezone: 'UTC', firstDay });
    expect(r.range).toEqual({ from, to: '2026-06-15', timezone: 'UTC' });
    expect(r.name).toBe('all');
  });
});

describe('resolveRange: explicit from/to, at most 10 years', () => {
  const ctx = { now: NOW, timezone: 'Europe/Berlin', firstDay: FIRST_DAY };
  it.each<[string, RangeQuery, string, string, number, string, string]>([
    ['one month', { from: '2026-01-01', to: '2026-01-31' }, '2026-01-01', '2026-01-31', 31, '2025-12-01', '2025-12-31'],
    ['from = to', { from: '2026-03-29', to: '2026-03-29' }, '2026-03-29', '2026-03-29', 1, '2026-03-28', '2026-03-28'],
    [
      'wins over a valid range',
      { range: '7d', from: '2026-02-01', to: '2026-02-10' },
      '2026-02-01',
      '2026-02-10',
      10,
      '2026-01-22',
      '2026-01-31',
    ],
    [
      'an invalid range is ignored',
      { range: 'bogus', from: '2026-02-01', to: '2026-02-10' },
      '2026-02-01',
      '2026-02-10',
      10,
      '2026-01-22',
      '2026-01-31',
    ],
    [
      'future days are allowed',
      { from: '2030-01-01', to: '2030-12-31' },
      '2030-01-01',
      '2030-12-31',
      365,
      '2029-01-01',
      '2029-12-31',
    ],
    [
      'across a leap day',
      { from: '2024-02-01', to: '2024-02-29' },
      '2024-02-01',
      '2024-02-29',
      29,
      '2024-01-03',
      '2024-01-31',
    ],
    [
      'exactly 10 years',
      { from: '2016-01-01', to: '2025-12-31' },
      '2016-01-01',
      '2025-12-31',
      3653,
      '2005-12-31',
      '2015-12-31',
    ],
    [
      '10 years from a leap day',
      { from: '2024-02-29', to: '2034-02-28' },
      '2024-02-29',
      '2034-02-28',
      3653,
      '2014-02-28',
      '2024-02-28',
    ],
    [
      '10 years to a leap day',
      { from: '2026-03-01', to: '2036-02-29' },
      '2026-03-01',
      '2036-02-29',
      3653,
      '2016-02-29',
      '2026-02-28',
    ],
    [
      '10 years, two leap days',
      { from: '2017-01-01', to: '2026-12-31' },
      '2017-01-01',
      '2026-12-31',
      3652,
      '2007-01-02',
      '2016-12-31',
    ],
  ])('%s: %j → %s..%s (%i days), previous %s..%s', (_label, query, from, to, days, prevFrom, prevTo) => {
    expect(resolveRange(query, ctx)).toEqual({
      range: { from, to, timezone: 'Europe/Berlin' },
      previous: { from: prevFrom, to: prevTo, timezone: 'Europe/Berlin' },
      days,
      name: 'custom',
    });
  });

  it.each<[string, RangeQuery, string]>([
    ['one day past 10 years', { from: '2016-01-01', to: '2026-01-01' }, 'to'],
    ['one day past 10 years from a leap day', { from: '2024-02-29', to: '2034-03-01' }, 'to'],
    ['one day past 10 years to a leap day', { from: '2026-02-28', to: '2036-02-29' }, 'to'],
    ['from after to', { from: '2026-02-02', to: '2026-02-01' }, 'from'],
    ['from without to', { from: '2026-02-01' }, 'to'],
    ['to without from', { to: '2026-02-01' }, 'from'],
    ['from without to, with a range', { range: '7d', from: '2026-02-01' }, 'to'],
    ['empty from without to', { from: '' }, 'to'],
    ['from 2026-2-1', { from: '2026-2-1', to: '2026-02-10' }, 'from'],
    ['from 2026-02-30', { from: '2026-02-30', to: '2026-03-10' }, 'from'],
    ['from 20260201', { from: '20260201', to: '2026-02-10' }, 'from'],
    ['from empty', { from: '', to: '2026-02-10' }, 'from'],
    ['from with a time', { from: '2026-02-01T00:00:00Z', to: '2026-02-10' }, 'from'],
    ['from month 13', { from: '2026-13-01', to: '2026-02-10' }, 'from'],
    ['from year 0', { from: '0000-01-01', to: '0000-01-10' }, 'from'],
    ['to 2026-2-10', { from: '2026-02-01', to: '2026-2-10' }, 'to'],
    ['to 2025-02-29', { from: '2025-02-01', to: '2025-02-29' }, 'to'],
    ['to 20260210', { from: '2026-02-01', to: '20260210' }, 'to'],
    ['to empty', { from: '2026-02-01', to: '' }, 'to'],
    ['to padded', { from: '2026-02-01', to: ' 2026-02-10' }, 'to'],
  ])('%s → 400 naming %s', (_label, query, parameter) => {
    const err = badParameter(() => resolveRange(query, ctx));
    expect(err.parameter).toBe(parameter);
    expect(err.status).toBe(400);
  });
});

describe('resolveRange: range values', () => {
  it.each(['bogus', '7D', '', 'week', '1y', ' 7d', '7d '])('range=%j → 400 naming range', (range) => {
    const err = badParameter(() => resolveRange({ range }, { now: NOW, timezone: 'UTC', firstDay: null }));
    expect(err.parameter).toBe('range');
    expect(err.message).toBe('range: must be one of today, 7d, 30d, 90d, 12m, all');
  });

  it.each([
    ['an unknown timezone', 'Mars/Olympus', null],
    ['an empty timezone', '', null],
    ['a malformed first day', 'UTC', '2026-1-1'],
  ] as const)('%s is a programming error (plain Error, not a 400)', (_label, timezone, firstDay) => {
    let caught: unknown;
    try {
      resolveRange({ range: '7d' }, { now: NOW, timezone, firstDay });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(Error);
    expect(caught).not.toBeInstanceOf(FootfallError);
  });
});

describe('localDay: the local date of an instant', () => {
  it.each([
    ['2026-06-15T22:45:00Z', 'UTC', '2026-06-15'],
    ['1970-01-01T00:00:00Z', 'UTC', '1970-01-01'],
    ['1969-12-31T23:59:59.999Z', 'UTC', '1969-12-31'],
    ['2026-03-28T22:59:59.999Z', 'Europe/Berlin', '2026-03-28'], // 23:59:59.999 CET
    ['2026-03-28T23:00:00.000Z', 'Europe/Berlin', '2026-03-29'], // 00:00 CET, the 23-hour day
    ['2026-03-29T21:59:59.999Z', 'Europe/Berlin', '2026-03-29'], // 23:59:59.999 CEST
    ['2026-03-29T22:00:00.000Z', 'Europe/Berlin', '2026-03-30'],
    ['2026-10-25T22:59:59.999Z', 'Europe/Berlin', '2026-10-25'], // end of the 25-hour day
    ['2026-10-25T23:00:00.000Z', 'Europe/Berlin', '2026-10-26'],
    ['2026-06-15T18:29:59.999Z', 'Asia/Kolkata', '2026-06-15'],
    ['2026-06-15T18:30:00.000Z', 'Asia/Kolkata', '2026-06-16'],
    ['2026-06-15T09:59:59.999Z', 'Pacific/Kiritimati', '2026-06-15'],
    ['2026-06-15T10:00:00.000Z', 'Pacific/Kiritimati', '2026-06-16'],
    ['2026-06-16T10:59:59.999Z', 'Pacific/Pago_Pago', '2026-06-15'],
    ['2026-06-16T11:00:00.000Z', 'Pacific/Pago_Pago', '2026-06-16'],
    ['2026-06-16T06:59:59.999Z', 'America/Los_Angeles', '2026-06-15'],
    ['2026-06-16T07:00:00.000Z', 'America/Los_Angeles', '2026-06-16'],
    // Havana falls back from 01:00 to 00:00 on 2026-11-01: both midnights are that day.
    ['2026-11-01T03:59:59.999Z', 'America/Havana', '2026-10-31'],
    ['2026-11-01T04:00:00.000Z', 'America/Havana', '2026-11-01'],
    ['2026-11-01T05:00:00.000Z', 'America/Havana', '2026-11-01'],
  ])('%s in %s → %s', (iso, timezone, day) => {
    expect(localDay(ms(iso), timezone)).toBe(day);
  });
});

describe('localDay and localHour of one instant in turn (the last answer is reused)', () => {
  it('answers each zone its own day and hour, asked alternately of the same instant', () => {
    const t = ms('2026-06-15T22:45:00Z');
    for (let i = 0; i < 2; i++) {
      expect(localDay(t, 'UTC')).toBe('2026-06-15');
      expect(localHour(t, 'UTC')).toBe('2026-06-15T22');
      expect(localDay(t, 'Asia/Tokyo')).toBe('2026-06-16');
      expect(localHour(t, 'Asia/Tokyo')).toBe('2026-06-16T07');
      expect(localHour(t + 3_600_000, 'Asia/Tokyo')).toBe('2026-06-16T08');
    }
  });
});

describe('dayStart and rangeBounds: DST-correct local midnights', () => {
  it.each([
    ['2026-06-16', 'UTC', '2026-06-16T00:00:00.000Z', 24],
    ['2026-06-16', 'Asia/Kolkata', '2026-06-15T18:30:00.000Z', 24],
    ['2026-06-16', 'Pacific/Kiritimati', '2026-06-15T10:00:00.000Z', 24],
    ['2026-06-16', 'Pacific/Pago_Pago', '2026-06-16T11:00:00.000Z', 24],
    ['2026-03-29', 'Europe/Berlin', '2026-03-28T23:00:00.000Z', 23], // 02:00 → 03:00
    ['2026-03-30', 'Europe/Berlin', '2026-03-29T22:00:00.000Z', 24],
    ['2026-10-25', 'Europe/Berlin', '2026-10-24T22:00:00.000Z', 25], // 03:00 → 02:00
    ['2026-10-26', 'Europe/Berlin', '2026-10-25T23:00:00.000Z', 24],
    ['2026-03-08', 'America/Los_Angeles', '2026-03-08T08:00:00.000Z', 23],
    ['2026-11-01', 'America/Los_Angeles', '2026-11-01T07:00:00.000Z', 25],
    // Local midnight skipped (00:00 → 01:00): the day starts at the transition.
    ['2026-03-08', 'America/Havana', '2026-03-08T05:00:00.000Z', 23],
    ['2026-03-29', 'Asia/Beirut', '2026-03-28T22:00:00.000Z', 23],
    ['2026-09-06', 'America/Santiago', '2026-09-06T04:00:00.000Z', 23],
    ['2026-04-24', 'Africa/Cairo', '2026-04-23T22:00:00.000Z', 23],
    // Local midnight repeated (01:00 → 00:00): the day starts at the first one.
    ['2026-11-01', 'America/Havana', '2026-11-01T04:00:00.000Z', 25],
    ['2026-10-31', 'America/Havana', '2026-10-31T04:00:00.000Z', 24],
    // Samoa skipped 2011-12-30 altogether: that day is empty.
    ['2011-12-30', 'Pacific/Apia', '2011-12-30T10:00:00.000Z', 0],
    ['2011-12-31', 'Pacific/Apia', '2011-12-30T10:00:00.000Z', 24],
    // Berlin local mean time, +0:53:28: offsets to the second.
    ['1890-01-01', 'Europe/Berlin', '1889-12-31T23:06:32.000Z', 24],
  ])('%s in %s starts at %s and lasts %i hours', (day, timezone, start, hours) => {
    expect(new Date(dayStart(day, timezone)).toISOString()).toBe(start);
    const { startMs, endMs } = rangeBounds({ from: day, to: day, timezone });
    expect(startMs).toBe(ms(start));
    expect((endMs - startMs) / HOUR).toBe(hours);
    expect(localDay(endMs, timezone)).toBe(addDays(day, 1));
  });

  it.each([
    ['2026-03-01', '2026-03-31', 'Europe/Berlin', 31 * 24 - 1],
    ['2026-10-01', '2026-10-31', 'Europe/Berlin', 31 * 24 + 1],
    ['2026-01-01', '2026-12-31', 'Europe/Berlin', 365 * 24],
    ['2026-03-07', '2026-03-09', 'America/Havana', 3 * 24 - 1],
  ])('rangeBounds %s..%s in %s spans %i hours, half-open', (from, to, timezone, hours) => {
    const { startMs, endMs } = rangeBounds({ from, to, timezone });
    expect((endMs - startMs) / HOUR).toBe(hours);
    expect(localDay(startMs, timezone)).toBe(from);
    expect(localDay(endMs - 1, timezone)).toBe(to);
    expect(localDay(endMs, timezone)).toBe(addDays(to, 1));
  });
});

describe('day arithmetic', () => {
  it.each([
    ['2026-01-31', 1, '2026-02-01'],
    ['2026-12-31', 1, '2027-01-01'],
    ['2027-01-01', -1, '2026-12-31'],
    ['2024-02-28', 1, '2024-02-29'],
    ['2023-02-28', 1, '2023-03-01'],
    ['2024-03-01', -1, '2024-02-29'],
    ['2026-06-15', 0, '2026-06-15'],
    ['2026-06-15', -365, '2025-06-15'],
    ['2000-02-28', 1, '2000-02-29'], // divisible by 400: leap
    ['2100-02-28', 1, '2100-03-01'], // divisible by 100: not
    ['0001-01-01', -1, '0000-12-31'],
  ])('addDays(%s, %i) = %s', (day, n, expected) => {
    expect(addDays(day, n)).toBe(expected);
  });

  it.each([
    ['2026-11-21', -1, '2025-11-21'],
    ['2028-02-29', -1, '2027-02-28'],
    ['2024-02-29', 10, '2034-02-28'],
    ['2024-02-29', 4, '2028-02-29'],
    ['2026-01-31', 1, '2027-01-31'],
  ])('addYears(%s, %i) = %s', (day, n, expected) => {
    expect(addYears(day, n)).toBe(expected);
  });

  it.each([
    ['2024-02-28', '2024-03-01', 3],
    ['2023-02-28', '2023-03-01', 2],
    ['2026-06-15', '2026-06-15', 1],
    ['2026-01-01', '2026-12-31', 365],
    ['2024-01-01', '2024-12-31', 366],
    ['2026-06-16', '2026-06-15', 0],
  ])('daysBetween(%s, %s) = %i', (from, to, expected) => {
    expect(daysBetween(from, to)).toBe(expected);
  });

  it.each([
    ['2024-02-27', '2024-03-01', ['2024-02-27', '2024-02-28', '2024-02-29', '2024-03-01']],
    ['2026-12-31', '2027-01-01', ['2026-12-31', '2027-01-01']],
    ['2026-06-15', '2026-06-15', ['2026-06-15']],
    ['2026-06-16', '2026-06-15', []],
  ])('eachDay(%s, %s) = %j', (from, to, expected) => {
    expect(eachDay(from, to)).toEqual(expected);
  });

  it.each([
    ['2026-02-01', true],
    ['2024-02-29', true],
    ['2000-02-29', true],
    ['0001-01-01', true],
    ['9999-12-31', true],
    ['2026-2-1', false],
    ['2026-02-30', false],
    ['2025-02-29', false],
    ['2100-02-29', false],
    ['20260201', false],
    ['', false],
    ['2026-00-10', false],
    ['2026-04-31', false],
    ['0000-01-01', false],
    ['12026-01-01', false],
    ['2026-01-01 ', false],
    ['2026/01/01', false],
    ['２０２６-01-01', false],
  ])('isValidDay(%j) = %s', (s, expected) => {
    expect(isValidDay(s)).toBe(expected);
  });
});

describe('splitMonths: whole months for monthly rollups, the rest for daily ones', () => {
  it.each<[string, string, string, [string, string] | null, [string, string] | null, [string, string] | null]>([
    ['inside one month', '2026-03-05', '2026-03-20', ['2026-03-05', '2026-03-20'], null, null],
    ['one day', '2026-03-05', '2026-03-05', ['2026-03-05', '2026-03-05'], null, null],
    ['start of a month, not whole', '2026-03-01', '2026-03-30', ['2026-03-01', '2026-03-30'], null, null],
    ['exactly one month', '2026-03-01', '2026-03-31', null, ['2026-03', '2026-03'], null],
    ['exactly a leap February', '2024-02-01', '2024-02-29', null, ['2024-02', '2024-02'], null],
    [
      'two partial months',
      '2026-01-15',
      '2026-02-10',
      ['2026-01-15', '2026-01-31'],
      null,
      ['2026-02-01', '2026-02-10'],
    ],
    [
      'head, months and tail',
      '2026-01-15',
      '2026-04-10',
      ['2026-01-15', '2026-01-31'],
      ['2026-02', '2026-03'],
      ['2026-04-01', '2026-04-10'],
    ],
    ['months and tail', '2026-01-01', '2026-02-10', null, ['2026-01', '2026-01'], ['2026-02-01', '2026-02-10']],
    ['head and months', '2026-01-15', '2026-02-28', ['2026-01-15', '2026-01-31'], ['2026-02', '2026-02'], null],
    [
      'across a year boundary',
      '2025-11-20',
      '2026-02-05',
      ['2025-11-20', '2025-11-30'],
      ['2025-12', '2026-01'],
      ['2026-02-01', '2026-02-05'],
    ],
    ['whole years', '2025-01-01', '2026-12-31', null, ['2025-01', '2026-12'], null],
    ['10 years', '2016-01-01', '2025-12-31', null, ['2016-01', '2025-12'], null],
    [
      '10 years, ragged',
      '2016-02-29',
      '2026-02-27',
      ['2016-02-29', '2016-02-29'],
      ['2016-03', '2026-01'],
      ['2026-02-01', '2026-02-27'],
    ],
    ['12m from a leap day', '2027-03-01', '2028-02-29', null, ['2027-03', '2028-02'], null],
  ])('%s: %s..%s', (_label, from, to, headDays, months, tailDays) => {
    const split = splitMonths(from, to);
    expect(split).toEqual({ headDays, months, tailDays });
    // The parts tile the range exactly: every day once, in order.
    const covered = [
      ...(split.headDays ? eachDay(...split.headDays) : []),
      ...(split.months ? eachDay(`${split.months[0]}-01`, addDays(`${nextMonth(split.months[1])}-01`, -1)) : []),
      ...(split.tailDays ? eachDay(...split.tailDays) : []),
    ];
    expect(covered).toEqual(eachDay(from, to));
  });

  it('rejects a range that ends before it starts', () => {
    expect(() => splitMonths('2026-02-02', '2026-02-01')).toThrow(Error);
  });
});

/** `YYYY-MM` of the month after `month`. */
function nextMonth(month: string): string {
  return addDays(`${month}-28`, 4).slice(0, 7);
}

describe('localHour and hoursOfDay: wall-clock hours of a local day', () => {
  it.each([
    ['Europe/Berlin', '2026-03-20T09:10:00Z', '2026-03-20T10'],
    ['Europe/Berlin', '2026-03-29T00:59:59Z', '2026-03-29T01'], // the last instant before clocks spring forward
    ['Europe/Berlin', '2026-03-29T01:00:00Z', '2026-03-29T03'], // 02:00 does not exist
    ['Europe/Berlin', '2026-10-25T00:30:00Z', '2026-10-25T02'], // 02:30 summer time
    ['Europe/Berlin', '2026-10-25T01:30:00Z', '2026-10-25T02'], // 02:30 winter time: the same wall hour
    ['Asia/Kolkata', '2026-01-01T18:29:00Z', '2026-01-01T23'],
    ['Asia/Kolkata', '2026-01-01T18:30:00Z', '2026-01-02T00'],
    ['Asia/Kathmandu', '2026-01-01T18:15:00Z', '2026-01-02T00'],
    ['UTC', '2026-12-31T23:59:59Z', '2026-12-31T23'],
  ])('%s at %s is %s', (tz, iso, hour) => {
    expect(localHour(ms(iso), tz)).toBe(hour);
  });

  it.each([
    ['UTC', '2026-03-29', 24, null],
    ['Europe/Berlin', '2026-03-29', 23, '2026-03-29T02'], // spring forward: no 02:00
    ['Europe/Berlin', '2026-10-25', 24, null], // fall back: 02:00 twice, one label
    ['America/Havana', '2026-03-08', 23, '2026-03-08T00'], // midnight skipped: the day starts at 01:00
    ['Australia/Lord_Howe', '2026-10-04', 24, null], // a 30-minute shift keeps every wall hour
    ['Asia/Kathmandu', '2026-06-01', 24, null],
  ])('%s on %s has %i hours (missing: %s)', (tz, day, count, missing) => {
    const hours = hoursOfDay(day, tz);
    expect(hours).toHaveLength(count);
    expect(hours.every((h) => h.startsWith(`${day}T`))).toBe(true);
    expect([...hours].sort()).toEqual(hours);
    if (missing) expect(hours).not.toContain(missing);
    // Every instant of the day falls in one of its hours.
    const start = dayStart(day, tz);
    const end = dayStart(addDays(day, 1), tz);
    for (let t = start; t < end; t += 15 * 60_000) expect(hours).toContain(localHour(t, tz));
  });
});
