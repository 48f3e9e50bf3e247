import { describe, expect, it } from 'vitest';
import {
  daysBetween,
  intervalFor,
  intervalFromQuery,
  intervalsFor,
  rangeFromQuery,
  rangeLabel,
  rangeSearch,
} from '../../app/src/range.js';
import { pointSeconds } from '../../app/src/components/chart-points.js';

describe("the app's range in the URL", () => {
  it.each([
    [{}, { range: '30d' }],
    [{ range: '7d' }, { range: '7d' }],
    [{ range: 'bogus' }, { range: '30d' }],
    [
      { from: '2026-03-01', to: '2026-03-09' },
      { from: '2026-03-01', to: '2026-03-09' },
    ],
    // from/to win over range, as in the API (docs/api.md)
    [
      { range: '7d', from: '2026-03-01', to: '2026-03-09' },
      { from: '2026-03-01', to: '2026-03-09' },
    ],
    // reversed dates are put in order; a bad date falls back to range
    [
      { from: '2026-03-09', to: '2026-03-01' },
      { from: '2026-03-01', to: '2026-03-09' },
    ],
    [{ from: '2026-3-1', to: '2026-03-09', range: '90d' }, { range: '90d' }],
  ])('%j → %j', (query, range) => {
    expect(rangeFromQuery(query)).toEqual(range);
  });

  it('writes back what it reads, with extra parameters', () => {
    expect(rangeSearch({ range: '12m' })).toBe('?range=12m');
    expect(rangeSearch({ from: '2026-01-01', to: '2026-01-31' }, { filter: 'refunded', offset: null })).toBe(
      '?from=2026-01-01&to=2026-01-31&filter=refunded',
    );
    for (const q of [{ range: 'today' }, { from: '2025-12-30', to: '2026-01-02' }])
      expect(rangeFromQuery(Object.fromEntries(new URLSearchParams(rangeSearch(q))))).toEqual(q);
  });

  it.each([
    [{ range: 'today' }, 'hour'],
    [{ range: '7d' }, 'day'],
    [{ range: '90d' }, 'day'],
    [{ range: '12m' }, 'month'],
    [{ range: 'all' }, undefined],
    [{ from: '2026-03-09', to: '2026-03-09' }, 'hour'],
    [{ from: '2026-03-01', to: '2026-03-09' }, 'day'],
    [{ from: '2026-01-01', to: '2026-04-02' }, 'day'],
    [{ from: '2026-01-01', to: '2026-04-03' }, 'month'],
    [{ from: '2025-01-01', to: '2026-02-04' }, 'month'],
    [{ from: '2024-01-01', to: '2026-03-09' }, 'month'],
  ] as const)('charts %j by %s', (range, interval) => {
    expect(intervalFor(range)).toBe(interval);
  });

  it.each([
    [1, ['hour']],
    [2, ['hour', 'day']],
    [7, ['hour', 'day']],
    [8, ['day']],
    [31, ['day']],
    [32, ['day', 'month']],
    [400, ['day', 'month']],
    [401, ['month']],
  ] as const)('offers, for %i days, the intervals %j', (days, offered) => {
    expect(intervalsFor(days)).toEqual(offered);
  });

  it('reads only known intervals from the address', () => {
    expect(intervalFromQuery({ interval: 'month' })).toBe('month');
    expect(intervalFromQuery({ interval: 'week' })).toBeUndefined();
    expect(intervalFromQuery({ interval: '__proto__' })).toBeUndefined();
    expect(intervalFromQuery({})).toBeUndefined();
  });

  it('counts days inclusively across DST and leap days', () => {
    expect(daysBetween('2026-03-28', '2026-03-30')).toBe(3);
    expect(daysBetween('2024-02-28', '2024-03-01')).toBe(3);
    expect(daysBetween('2026-01-01', '2026-12-31')).toBe(365);
  });

  it('labels ranges', () => {
    expect(rangeLabel({ range: '90d' })).toBe('Last 90 days');
    expect(rangeLabel({ from: '2026-03-01', to: '2026-03-09' })).toBe('1 Mar 2026 – 9 Mar 2026');
  });

  it('puts time-series points on a UTC axis as the site-local times they are', () => {
    expect(pointSeconds('2026-03-29')).toBe(Date.UTC(2026, 2, 29) / 1000);
    expect(pointSeconds('2026-03')).toBe(Date.UTC(2026, 2, 1) / 1000);
    expect(pointSeconds('2026-03-29T02:00')).toBe(Date.UTC(2026, 2, 29, 2) / 1000);
  });
});
