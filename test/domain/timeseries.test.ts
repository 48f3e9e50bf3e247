import { describe, expect, it } from 'vitest';
import { addVisitors, emptySketch } from '../../lambdas/domain/visitor-sketch.js';
import {
  defaultInterval,
  paymentSpans,
  timeseriesPoints,
  visitSpans,
  type Interval,
} from '../../lambdas/domain/reports/timeseries.js';
import { dayTotals, monthTotals, type Contribution } from '../../lambdas/domain/payments/contribution.js';
import { localDay, localHour } from '../../lambdas/domain/range.js';
import type { DateRange } from '../../lambdas/domain/range.js';

const BERLIN = 'Europe/Berlin';
const item = (period: string, visits: number, pageviews: number, ids: string[]) => ({
  period,
  visits,
  pageviews,
  visitors: ids.length,
  sketch: addVisitors(emptySketch(), ids),
});
const FAILED = 1;
const REFUNDED = 2;
/** A payment's contribution in `tz` (flags: FAILED, REFUNDED). */
const paid = (iso: string, cents: number, flags = 0, tz = BERLIN): Contribution => {
  const ts = Date.parse(iso);
  return {
    key: `stripe:${iso}`,
    rev: 1,
    ts,
    day: localDay(ts, tz),
    hour: localHour(ts, tz),
    cents,
    customer: 'cus',
    touch_day: null,
    failed: (flags & FAILED) !== 0,
    refunded: (flags & REFUNDED) !== 0,
    dims: null,
  };
};
/** The day items of some contributions, as the store keeps them. */
const days = (...cs: Contribution[]) =>
  [...new Set(cs.map((c) => c.day))].map((day) => ({
    period: day,
    totals: dayTotals(
      day,
      cs.filter((c) => c.day === day),
    ),
  }));
const month = (m: string, ...cs: Contribution[]) => ({
  period: m,
  totals: monthTotals(
    m,
    days(...cs).map((d) => d.totals),
  ),
});

describe('timeseriesPoints: one point per local hour, day or month, empty ones included', () => {
  it('by day: visits, page views and distinct visitors per day; payments by their local day, failed ones left out', () => {
    const range: DateRange = { from: '2026-03-01', to: '2026-03-03', timezone: BERLIN };
    const points = timeseriesPoints(
      {
        visits: [item('2026-03-01', 2, 5, ['a', 'b']), item('2026-03-03', 1, 1, ['a'])],
        // 23:30 in Berlin: still the 1st; 00:30 on the 3rd.
        payments: days(
          paid('2026-03-01T22:30:00Z', 4900),
          paid('2026-03-02T23:30:00Z', 1000, REFUNDED),
          paid('2026-03-03T08:00:00Z', 500, FAILED),
        ),
      },
      range,
      'day',
    );
    expect(points).toEqual([
      { start: '2026-03-01', visitors: 2, sessions: 2, pageviews: 5, payments: 1, revenue_usd: 49 },
      { start: '2026-03-02', visitors: 0, sessions: 0, pageviews: 0, payments: 0, revenue_usd: 0 },
      { start: '2026-03-03', visitors: 1, sessions: 1, pageviews: 1, payments: 1, revenue_usd: 10 },
    ]);
  });

  it('by month: whole months from monthly items, partial ones from their days in the range, visitors distinct per month', () => {
    const range: DateRange = { from: '2026-01-30', to: '2026-03-02', timezone: BERLIN };
    const points = timeseriesPoints(
      {
        visits: [
          item('2026-01-30', 1, 1, ['a']),
          item('2026-01-31', 1, 2, ['a']),
          item('2026-02', 10, 30, ['a', 'b', 'c']),
          item('2026-03-01', 1, 1, ['d']),
        ],
        payments: [month('2026-02', paid('2026-02-14T12:00:00Z', 2000)), ...days(paid('2026-03-02T12:00:00Z', 333))],
      },
      range,
      'month',
    );
    expect(points).toEqual([
      { start: '2026-01', visitors: 1, sessions: 2, pageviews: 3, payments: 0, revenue_usd: 0 },
      { start: '2026-02', visitors: 3, sessions: 10, pageviews: 30, payments: 1, revenue_usd: 20 },
      { start: '2026-03', visitors: 1, sessions: 1, pageviews: 1, payments: 1, revenue_usd: 3.33 },
    ]);
  });

  it('by hour: 23 points on the day clocks spring forward, payments by their local hour', () => {
    const range: DateRange = { from: '2026-03-29', to: '2026-03-29', timezone: BERLIN };
    const points = timeseriesPoints(
      { visits: [item('2026-03-29T03', 1, 2, ['a'])], payments: days(paid('2026-03-29T01:15:00Z', 100)) },
      range,
      'hour',
    );
    expect(points).toHaveLength(23);
    expect(points.map((p) => p.start)).not.toContain('2026-03-29T02:00');
    expect(points.find((p) => p.start === '2026-03-29T03:00')).toEqual({
      start: '2026-03-29T03:00',
      visitors: 1,
      sessions: 1,
      pageviews: 2,
      payments: 1,
      revenue_usd: 1,
    });
  });

  it('adds up to the range: sessions, payments and cents exactly, whatever the interval', () => {
    const range: DateRange = { from: '2026-02-27', to: '2026-03-02', timezone: 'UTC' };
    const payments = days(
      paid('2026-02-27T00:00:00Z', 1, 0, 'UTC'),
      paid('2026-02-28T23:59:59Z', 10_001, 0, 'UTC'),
      paid('2026-03-02T12:00:00Z', 7, 0, 'UTC'),
    );
    const visits = {
      hour: [item('2026-02-27T05', 3, 4, ['a'])],
      day: [item('2026-02-27', 3, 4, ['a'])],
      month: [item('2026-02-27', 3, 4, ['a'])],
    };
    for (const interval of ['hour', 'day', 'month'] as Interval[]) {
      const points = timeseriesPoints({ visits: visits[interval], payments }, range, interval);
      expect(
        points.reduce((n, p) => n + p.sessions, 0),
        interval,
      ).toBe(3);
      expect(
        points.reduce((n, p) => n + p.payments, 0),
        interval,
      ).toBe(3);
      expect(
        points.reduce((n, p) => n + Math.round(p.revenue_usd * 100), 0),
        interval,
      ).toBe(10_009);
    }
  });
});

describe('timeseries reads and default interval', () => {
  it.each([
    [{ from: '2026-03-05', to: '2026-03-05' }, 'hour'],
    [{ from: '2026-03-05', to: '2026-03-06' }, 'day'],
    [{ from: '2025-03-06', to: '2026-03-05' }, 'day'],
    [{ from: '2025-01-01', to: '2026-03-05' }, 'month'],
  ])('defaults %j to %s', (range, interval) => {
    expect(defaultInterval(range)).toBe(interval);
  });

  // Visitor sets only where a point unions several periods (a partial month's days); else each item's count.
  it.each([
    [
      'hour',
      [{ granularity: 'H', from: '2026-01-30T00', to: '2026-03-02T23', sketches: false }],
      [{ granularity: 'D', from: '2026-01-30', to: '2026-03-02' }],
    ],
    [
      'day',
      [{ granularity: 'D', from: '2026-01-30', to: '2026-03-02', sketches: false }],
      [{ granularity: 'D', from: '2026-01-30', to: '2026-03-02' }],
    ],
    [
      'month',
      [
        { granularity: 'D', from: '2026-01-30', to: '2026-01-31', sketches: true },
        { granularity: 'M', from: '2026-02', to: '2026-02', sketches: false },
        { granularity: 'D', from: '2026-03-01', to: '2026-03-02', sketches: true },
      ],
      [
        { granularity: 'D', from: '2026-01-30', to: '2026-01-31' },
        { granularity: 'M', from: '2026-02', to: '2026-02' },
        { granularity: 'D', from: '2026-03-01', to: '2026-03-02' },
      ],
    ],
  ])('by %s reads %j', (interval, visits, payments) => {
    const range = { from: '2026-01-30', to: '2026-03-02' };
    expect(visitSpans(range, interval as Interval)).toEqual(visits);
    expect(paymentSpans(range, interval as Interval)).toEqual(payments);
  });

  it("takes a point's one item's distinct count without its set, and unions the sets of a point of several items", () => {
    const range: DateRange = { from: '2026-01-30', to: '2026-02-28', timezone: 'UTC' };
    const noSet = (period: string, visitors: number) => ({
      period,
      visits: visitors,
      pageviews: visitors,
      visitors,
      sketch: null,
    });
    const points = timeseriesPoints(
      {
        visits: [item('2026-01-30', 1, 1, ['a', 'b']), item('2026-01-31', 1, 1, ['b', 'c']), noSet('2026-02', 123_456)],
        payments: [],
      },
      range,
      'month',
    );
    expect(points.map((p) => [p.start, p.visitors])).toEqual([
      ['2026-01', 3],
      ['2026-02', 123_456],
    ]);
    expect(() =>
      timeseriesPoints({ visits: [noSet('2026-01-30', 2), noSet('2026-01-31', 2)], payments: [] }, range, 'month'),
    ).toThrow(/visitor sets/);
  });
});
