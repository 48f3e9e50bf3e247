import type { Interval, RangeQuery } from './api.js';

/**
 * The dashboard's range, kept in the URL (`?range=30d` or `?from=…&to=…`) so
 * a link reproduces the view (issue 17). Pure functions of the query string.
 */

/** Named ranges of the report API (spec §4.1), in the picker's order. */
export const RANGES = [
  { value: 'today', label: 'Today', key: 'd' },
  { value: '7d', label: 'Last 7 days', key: 'w' },
  { value: '30d', label: 'Last 30 days', key: 't' },
  { value: '90d', label: 'Last 90 days', key: 'n' },
  { value: '12m', label: 'Last 12 months', key: 'y' },
  { value: 'all', label: 'All time', key: 'a' },
] as const;

export type NamedRange = (typeof RANGES)[number]['value'];

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * The range a query string asks for: explicit `from`/`to` win (as in the API),
 * then a known `range`, else `fallback` (the site's default is the API's
 * business, so the app's fallback is `30d` like the API's).
 */
export function rangeFromQuery(query: Record<string, string | undefined>, fallback: NamedRange = '30d'): RangeQuery {
  const { from, to, range } = query;
  if (from && to && DATE.test(from) && DATE.test(to)) return from <= to ? { from, to } : { from: to, to: from };
  if (range && RANGES.some((r) => r.value === range)) return { range };
  return { range: fallback };
}

/** The query string that reproduces a range (plus any other parameters). */
export function rangeSearch(range: RangeQuery, extra: Record<string, string | number | null | undefined> = {}): string {
  const params = new URLSearchParams();
  if ('from' in range) {
    params.set('from', range.from);
    params.set('to', range.to);
  } else params.set('range', range.range);
  for (const [k, v] of Object.entries(extra)) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  return `?${params.toString()}`;
}

/** Days from `from` to `to`, both inclusive (local dates, so no DST question). */
export function daysBetween(from: string, to: string): number {
  return (
    Math.round(
      (Date.UTC(+to.slice(0, 4), +to.slice(5, 7) - 1, +to.slice(8, 10)) -
        Date.UTC(+from.slice(0, 4), +from.slice(5, 7) - 1, +from.slice(8, 10))) /
        86_400_000,
    ) + 1
  );
}

/** Above this many days a chart by day is too dense to read; months instead (the API's own limit for `day`). */
export const MAX_DAY_POINTS = 400;

/**
 * The chart's interval: by hour for one day, by day up to a year and a bit,
 * by month beyond. The length of `all` is unknown until the API resolves it,
 * so `all` leaves the choice to the API, whose default follows the same rule
 * (`undefined`: no `interval` parameter).
 */
export function intervalFor(range: RangeQuery): Interval | undefined {
  if ('from' in range) {
    const days = daysBetween(range.from, range.to);
    return days <= 1 ? 'hour' : days <= MAX_DAY_POINTS ? 'day' : 'month';
  }
  return range.range === 'today' ? 'hour' : range.range === 'all' ? undefined : 'day';
}

/** A short human label for a range: "Last 30 days", or "3 Mar – 9 Mar 2026". */
export function rangeLabel(range: RangeQuery): string {
  if ('range' in range) return RANGES.find((r) => r.value === range.range)?.label ?? range.range;
  return range.from === range.to ? formatDay(range.from) : `${formatDay(range.from)} – ${formatDay(range.to)}`;
}

const dayFormat = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
});

/** `2026-03-09` → `9 Mar 2026` (a local date, formatted without shifting it). */
export function formatDay(day: string): string {
  return dayFormat.format(new Date(`${day}T00:00:00Z`));
}
