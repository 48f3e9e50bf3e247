import { EXACT_LIMIT, countVisitors, unionSketches, type VisitorSketch } from '../visitor-sketch.js';
import type { PeriodTotals } from '../payments/contribution.js';
import { daysBetween, eachDay, hoursOfDay, type DateRange } from '../range.js';
import { periodSpans, usd, type PeriodSpan } from './periods.js';
import type { ImportedVisits } from '../imported/aggregate.js';

/** Intervals of the time series (`docs/api.md`, "Time series"). */
export const INTERVALS = ['hour', 'day', 'month'] as const;
export type Interval = (typeof INTERVALS)[number];

/**
 * Longest range each interval takes, in days: a bound on the points of one
 * answer and on the rollup items it reads (one per hour or day). `month` reads
 * monthly items and takes any range.
 */
export const INTERVAL_MAX_DAYS: Readonly<Record<Interval, number | null>> = { hour: 7, day: 400, month: null };

/** One point of the series (`docs/api.md`): `start` is site-local; `revenue_usd` net of refunds. */
export interface TimeseriesPoint {
  start: string;
  visitors: number;
  sessions: number;
  pageviews: number;
  payments: number;
  revenue_usd: number;
}

/**
 * What a series reads: `visits` rollup items with their period and distinct
 * visitors (and their visitor sets where `visitSpans` asks for them), and the
 * payment counters of the range's days and months.
 */
export interface TimeseriesInput {
  visits: ReadonlyArray<{
    period: string;
    visits: number;
    pageviews: number;
    visitors: number;
    sketch: VisitorSketch | null;
  }>;
  payments: ReadonlyArray<{ period: string; totals: PeriodTotals }>;
  /** Imported `visits` periods of the range (days and months as `paymentSpans` reads them; none by hour). */
  imported?: ReadonlyArray<{ period: string; visits: ImportedVisits }>;
  /** The range's `openMonth` when `visits` holds its monthly item (`visitSpans`). */
  openMonth?: string | null;
}

/**
 * The interval when the query names none: by hour for one day, by day up to
 * `INTERVAL_MAX_DAYS.day`, by month beyond.
 */
export function defaultInterval(range: Pick<DateRange, 'from' | 'to'>): Interval {
  const days = daysBetween(range.from, range.to);
  return days === 1 ? 'hour' : days <= (INTERVAL_MAX_DAYS.day ?? Infinity) ? 'day' : 'month';
}

/**
 * The rollup reads of a series: hourly items of the range's days for `hour`,
 * daily ones for `day`, and for `month` the same spans as the overview (whole
 * months from monthly items, the days at each end from daily ones), so a
 * partial first or last month counts only the range's days. A point of one
 * item takes that item's distinct visitors; only the days of a partial month
 * are unioned, so only those spans read visitor sets (`sketches`), except
 * those of the `openMonth`, whose monthly item is read with the whole months
 * (its count stands in for the union of its days', `timeseriesPoints`).
 * Payments are read by day and month as for the overview (`paymentSpans`).
 * @param open `openMonth(range, today)`, or null to read the days' sets
 */
export function visitSpans(
  range: Pick<DateRange, 'from' | 'to'>,
  interval: Interval,
  open: string | null = null,
): Array<PeriodSpan & { sketches: boolean }> {
  const month = (): Array<PeriodSpan & { sketches: boolean }> => {
    const spans = periodSpans(range).map((s) => ({ ...s, sketches: s.granularity === 'D' }));
    if (!open) return spans;
    spans.at(-1)!.sketches = false;
    // The open month's item in the same Query as the whole months (they are adjacent), else on its own.
    const months = spans.find((s) => s.granularity === 'M');
    if (months) months.to = open;
    else spans.splice(-1, 0, { granularity: 'M', from: open, to: open, sketches: false });
    return spans;
  };
  const spans: Record<Interval, () => Array<PeriodSpan & { sketches: boolean }>> = {
    hour: () => [{ granularity: 'H', from: `${range.from}T00`, to: `${range.to}T23`, sketches: false }],
    day: () => [{ granularity: 'D', from: range.from, to: range.to, sketches: false }],
    month,
  };
  return spans[interval]();
}

/**
 * Whether the open month's own count (`openMonth`) equals the union of its
 * days' visitor sets: when that union is a register sketch, that is when one
 * of the days holds more than `EXACT_LIMIT` visitors (an exact set never
 * does), since the month's set holds the same visitors; the union of exact
 * sets stays exact whatever its size, while the month's set turned into
 * registers past `EXACT_LIMIT` (`lambdas/domain/visitor-sketch.ts`).
 */
function monthCountStandsIn(days: ReadonlyArray<{ visitors: number }>): boolean {
  return days.some((d) => d.visitors > EXACT_LIMIT);
}

/**
 * Whether the days of the open month (`openMonth`), read without their
 * visitor sets, must be read again with them: the point unions several days
 * and the month's own count does not stand in for them (`monthCountStandsIn`).
 * @param items the `visits` items read over `visitSpans`
 */
export function openMonthNeedsSets(
  items: ReadonlyArray<{ period: string; visitors: number; sketch: VisitorSketch | null }>,
  open: string | null,
): boolean {
  if (!open) return false;
  const days = items.filter((i) => i.period.length === 10 && i.period.startsWith(open));
  return days.length > 1 && days.some((d) => !d.sketch) && !monthCountStandsIn(days);
}

/** Payment totals are kept by day and month; a day's item holds its hours. */
export function paymentSpans(range: Pick<DateRange, 'from' | 'to'>, interval: Interval): PeriodSpan[] {
  return interval === 'month' ? periodSpans(range) : [{ granularity: 'D', from: range.from, to: range.to }];
}

/** The point a rollup period belongs to, by the period's granularity and the series' interval. */
const POINT_OF_PERIOD: Readonly<Record<Interval, (period: string) => string>> = {
  hour: (p) => `${p}:00`,
  day: (p) => p,
  month: (p) => p.slice(0, 7),
};

/** Every point of a range, in order, including those with nothing in them. */
function pointStarts(range: DateRange, interval: Interval): string[] {
  const days = eachDay(range.from, range.to);
  if (interval === 'day') return days;
  if (interval === 'month') return [...new Set(days.map((d) => d.slice(0, 7)))];
  return days.flatMap((d) => hoursOfDay(d, range.timezone).map((h) => `${h}:00`));
}

/**
 * The time series of a range (`GET /api/v1/sites/{domain}/timeseries`,
 * `docs/api.md`): one point per local hour (`YYYY-MM-DDTHH:00`), day
 * (`YYYY-MM-DD`) or month (`YYYY-MM`, only the range's days of a partial
 * month) of the range in its timezone, empty ones included, oldest first.
 *
 * The points add up to the overview of the same range: `sessions` (visits
 * that started in the point), `payments` and `revenue_usd` (payments that did
 * not fail, by their time, net of refunds) add up exactly, as cents. Visitors
 * are distinct within a point, so a visitor active in two points counts in
 * both and the points' visitors add up to more than the range's.
 * `pageviews` are those of the visits that started in the point. An imported day adds its visitors,
 * visits and page views to its point (a month's imported visitors: the sum of its days').
 *
 * @param input the `visits` items read over `visitSpans(range, interval)` and
 *   the payment counters over `paymentSpans(range, interval)`
 */
export function timeseriesPoints(input: TimeseriesInput, range: DateRange, interval: Interval): TimeseriesPoint[] {
  const points = new Map<
    string,
    {
      items: Array<TimeseriesInput['visits'][number]>;
      month?: number;
      sessions: number;
      pageviews: number;
      payments: number;
      cents: number;
      imported: number;
    }
  >();
  const point = (start: string) => {
    let p = points.get(start);
    if (!p) points.set(start, (p = { items: [], sessions: 0, pageviews: 0, payments: 0, cents: 0, imported: 0 }));
    return p;
  };
  for (const start of pointStarts(range, interval)) point(start);
  for (const item of input.visits) {
    const p = point(POINT_OF_PERIOD[interval](item.period));
    // The open month's own item: its distinct visitors only, its days bring the rest.
    if (item.period === input.openMonth) {
      p.month = item.visitors;
      continue;
    }
    p.items.push(item);
    p.sessions += item.visits;
    p.pageviews += item.pageviews;
  }
  for (const { period, visits } of input.imported ?? []) {
    const p = point(POINT_OF_PERIOD[interval](period));
    p.imported += visits.visitors;
    p.sessions += visits.visits;
    p.pageviews += visits.pageviews;
  }
  for (const { period, totals } of input.payments) {
    const parts: Array<[string, number, number]> =
      interval === 'hour'
        ? Object.entries(totals.hours).map(([hour, [n, cents]]) => [POINT_OF_PERIOD.hour(hour), n, cents])
        : [[POINT_OF_PERIOD[interval](period), totals.payments, totals.cents]];
    for (const [start, n, cents] of parts) {
      const p = point(start);
      p.payments += n;
      p.cents += cents;
    }
  }
  return [...points]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([start, p]) => ({
      start,
      visitors: pointVisitors(p.items, p.month) + p.imported,
      sessions: p.sessions,
      pageviews: p.pageviews,
      payments: p.payments,
      revenue_usd: usd(p.cents),
    }));
}

/**
 * Distinct visitors of a point: its one item's count, or the union of its
 * items' visitor sets (a partial month's days), for which the open month's
 * own count (`month`) stands when it equals it (`monthCountStandsIn`).
 * @throws Error when a point of several items lacks a set (`visitSpans` asks for them)
 */
function pointVisitors(
  items: ReadonlyArray<{ period: string; visitors: number; sketch: VisitorSketch | null }>,
  month: number | undefined,
): number {
  if (items.length <= 1) return items[0]?.visitors ?? 0;
  if (month !== undefined && monthCountStandsIn(items)) return month;
  return countVisitors(
    unionSketches(
      items.map((i) => {
        if (!i.sketch) throw new Error('a time series point of several periods needs their visitor sets');
        return i.sketch;
      }),
    ),
  );
}
